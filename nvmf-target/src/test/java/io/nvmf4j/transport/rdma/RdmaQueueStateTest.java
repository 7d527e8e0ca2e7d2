package io.nvmf4j.transport.rdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.nvmf4j.cmd.CommandDispatcher;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.core.Target;
import io.nvmf4j.core.TransportLimits;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.transport.PollGroupExecutor;
import io.nvmf4j.transport.rdma.RdmaRequest.State;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/** The request state machine of an RDMA queue pair, driven without a device through a fake {@link RdmaQueue.Wire}. */
class RdmaQueueStateTest {
    private static final int CAPSULE = 64 + 4096;
    private static final int RECVS = 8;
    private static final int FABRICS = 0x7F;
    private static final int CONNECT = 0x01;

    private final TransportLimits limits = new TransportLimits(TransportLimits.TRTYPE_RDMA, 4096, 131072, 128, 8, 16);
    private final FakeWire wire = new FakeWire();
    private RdmaQueue queue;
    private ByteBuf responses;

    /** Records what the queue asks of the verbs side. */
    static final class FakeWire implements RdmaQueue.Wire {
        final ByteBuf recv = Unpooled.buffer(RECVS * CAPSULE).writerIndex(RECVS * CAPSULE);
        final List<Integer> reads = new ArrayList<>();
        final List<int[]> responses = new ArrayList<>();
        final List<Integer> reposted = new ArrayList<>();
        int shutdowns;
        int destroys;

        @Override
        public int postReads(RdmaRequest req) {
            reads.add(req.index);
            return 0;
        }

        @Override
        public int postResponse(RdmaRequest req, int writes) {
            responses.add(new int[] {req.index, writes, req.sgl.invalidate ? 1 : 0});
            return 0;
        }

        @Override
        public ByteBuf recvBuffer() {
            return recv;
        }

        @Override
        public int recvOffset(int recvIndex) {
            return recvIndex * CAPSULE;
        }

        @Override
        public ByteBuf capsuleData(int recvIndex) {
            return recv.slice(recvIndex * CAPSULE + 64, CAPSULE - 64);
        }

        @Override
        public void repostRecv(int recvIndex) {
            reposted.add(recvIndex);
        }

        @Override
        public void shutdown() {
            shutdowns++;
        }

        @Override
        public void destroy() {
            destroys++;
        }
    }

    private void newQueue(int buffers, int readDepth) {
        newQueue(buffers, readDepth, ImmediateEventExecutor.INSTANCE);
    }

    private void newQueue(int buffers, int readDepth, ScheduledExecutorService executor) {
        newQueue(buffers, readDepth, executor, 32);
    }

    private void newQueue(int buffers, int readDepth, ScheduledExecutorService executor, int parked) {
        DataBuffers pool = new DataBuffers(ByteBuffer.allocate(buffers * 4096), 0, 0x10000, buffers, 4096, 1);
        responses = Unpooled.buffer(RdmaQueue.requestCount(32) * RdmaQueue.CQE_SIZE);
        queue = new RdmaQueue(new CommandDispatcher(new Target()), limits, null, IoObserver.NONE,
            executor, pool, "test", 32, readDepth, parked, responses);
        queue.attach(wire);
    }

    @BeforeEach
    void setUp() {
        newQueue(4, 16);
    }

    /** A Connect SQE in receive buffer {@code recv} whose 1 KiB of data is behind a keyed SGL. */
    private void connectCapsule(int recv, int cid, int sglId) {
        connectCapsule(wire, recv, cid, sglId);
    }

    private static void connectCapsule(FakeWire w, int recv, int cid, int sglId) {
        int at = recv * CAPSULE;
        w.recv.setZero(at, 64);
        w.recv.setByte(at, FABRICS);
        w.recv.setByte(at + 1, 0x40); // PSDT 01b: SGLs
        w.recv.setShortLE(at + 2, cid);
        w.recv.setByte(at + 4, CONNECT);
        w.recv.setLongLE(at + 24, 0x7000_0000L);
        w.recv.setMediumLE(at + 32, 1024);
        w.recv.setIntLE(at + 35, 0x1234);
        w.recv.setByte(at + 39, sglId);
    }

    private int status(RdmaRequest req) {
        return NvmeStatus.fromCqeField(responses.getUnsignedShortLE(req.index * RdmaQueue.CQE_SIZE + 14));
    }

    private RdmaRequest onlyBusy() {
        for (int i = 0; i < RdmaQueue.requestCount(32); i++) {
            RdmaRequest r = queue.request(i);
            if (r.state != State.FREE) {
                return r;
            }
        }
        return null;
    }

    @Test
    void keyedWriteGoesThroughReadExecuteRespond() {
        connectCapsule(0, 7, 0x4F);
        queue.onCapsule(0, 64);
        RdmaRequest req = onlyBusy();
        assertThat(req.state).isEqualTo(State.TRANSFERRING_HOST_TO_CONTROLLER);
        assertThat(wire.reads).containsExactly(req.index);
        assertThat(wire.reposted).containsExactly(0);
        assertThat(queue.buffers().available()).isEqualTo(3);

        queue.onReadComplete(req.index, true, true);
        // the Connect names no subsystem: executed, failed, response posted with invalidation
        assertThat(req.state).isEqualTo(State.COMPLETING);
        assertThat(status(req)).isEqualTo(NvmeStatus.CONNECT_INVALID_PARAMETERS);
        assertThat(responses.getUnsignedShortLE(req.index * 16 + 12)).isEqualTo(7);
        assertThat(wire.responses).hasSize(1);
        assertThat(wire.responses.get(0)).containsExactly(req.index, 0, 1);

        queue.onSendComplete(req.index, true);
        assertThat(req.state).isEqualTo(State.FREE);
        assertThat(queue.outstanding()).isZero();
        assertThat(queue.buffers().available()).isEqualTo(4);
    }

    /**
     * A refused Connect is answered with the SQID of the queue it came on, the CM request's qid, not 0 (found by
     * the live RDMA fuzzer, e2e fuzzrdma: a Connect on I/O queue 8 refused, answered with SQID 0).
     */
    @Test
    void refusedConnectNamesTheQueueOfTheCmRequest() {
        queue.cmQid(8);
        connectCapsule(0, 5, 0x4F);
        queue.onCapsule(0, 64);
        RdmaRequest req = onlyBusy();
        queue.onReadComplete(req.index, true, true);
        assertThat(status(req)).isEqualTo(NvmeStatus.CONNECT_INVALID_PARAMETERS);
        assertThat(responses.getUnsignedShortLE(req.index * 16 + 12)).isEqualTo(5);
        assertThat(responses.getUnsignedShortLE(req.index * 16 + 10)).as("SQID").isEqualTo(8);
    }

    /**
     * In-capsule data is used where it arrived: no data buffer is taken, the request's data is the receive
     * buffer's data area, and the receive buffer goes back to the SRQ only once the request completes.
     */
    @Test
    void inCapsuleDataIsUsedInPlaceAndItsReceiveBufferHeldUntilCompletion() {
        connectCapsule(2, 9, 0x01); // SGL data block, offset: the 1 KiB of Connect data is in the capsule
        int at = 2 * CAPSULE;
        wire.recv.setLongLE(at + 24, 0); // offset 0 in the capsule's data
        wire.recv.setIntLE(at + 32, 1024);
        wire.recv.setMediumLE(at + 36, 0);
        queue.onCapsule(2, 64 + 1024);
        RdmaRequest req = onlyBusy();
        assertThat(req.state).isEqualTo(State.COMPLETING);
        assertThat(status(req)).as("names no subsystem").isEqualTo(NvmeStatus.CONNECT_INVALID_PARAMETERS);
        assertThat(wire.reads).as("nothing to fetch").isEmpty();
        assertThat(queue.buffers().available()).as("no data buffer taken").isEqualTo(4);
        assertThat(wire.reposted).as("the receive buffer holds the data until completion").doesNotContain(2);

        queue.onSendComplete(req.index, true);
        assertThat(req.state).isEqualTo(State.FREE);
        assertThat(wire.reposted).containsExactly(2);
        assertThat(queue.buffers().available()).isEqualTo(4);
    }

    @Test
    void commandBeforeConnectFailsWithoutData() {
        int at = 1 * CAPSULE;
        wire.recv.setZero(at, 64);
        wire.recv.setByte(at, 0x06); // Identify
        wire.recv.setByte(at + 1, 0x40);
        queue.onCapsule(1, 64);
        RdmaRequest req = onlyBusy();
        assertThat(req.state).isEqualTo(State.COMPLETING);
        assertThat(status(req)).isEqualTo(NvmeStatus.COMMAND_SEQUENCE_ERROR);
        assertThat(wire.reads).isEmpty();
        assertThat(wire.reposted).containsExactly(1);
    }

    @Test
    void badSglTypeIsAnsweredWithSglTypeInvalid() {
        connectCapsule(2, 9, 0x5A);
        queue.onCapsule(2, 64);
        RdmaRequest req = onlyBusy();
        assertThat(req.state).isEqualTo(State.COMPLETING);
        assertThat(status(req)).isEqualTo(NvmeStatus.SGL_TYPE_INVALID);
        assertThat(wire.responses.get(0)[2]).isZero();
    }

    @Test
    void requestsWaitForBuffersAndReadCredits() {
        newQueue(1, 16);
        connectCapsule(0, 1, 0x40);
        connectCapsule(1, 2, 0x40);
        queue.onCapsule(0, 64);
        queue.onCapsule(1, 64);
        RdmaRequest first = queue.request(wire.reads.get(0));
        RdmaRequest second = null;
        for (int i = 0; i < RdmaQueue.requestCount(32); i++) {
            if (queue.request(i).state == State.NEED_BUFFER) {
                second = queue.request(i);
            }
        }
        assertThat(second).isNotNull();
        assertThat(wire.reposted).containsExactly(0); // the waiting one still holds its capsule
        queue.onReadComplete(first.index, true, true);
        queue.onSendComplete(first.index, true);
        assertThat(second.state).isEqualTo(State.TRANSFERRING_HOST_TO_CONTROLLER);
        assertThat(wire.reposted).containsExactly(0, 1);

        newQueue(4, 1);
        wire.reads.clear();
        queue.onCapsule(0, 64);
        queue.onCapsule(1, 64);
        assertThat(wire.reads).hasSize(1);
        RdmaRequest a = queue.request(wire.reads.get(0));
        queue.onReadComplete(a.index, true, true);
        assertThat(wire.reads).hasSize(2);
    }

    @Test
    void closeForcesWaitingRequestsAndWaitsForInFlightReads() {
        newQueue(1, 16);
        connectCapsule(0, 1, 0x40);
        connectCapsule(1, 2, 0x40);
        queue.onCapsule(0, 64);
        queue.onCapsule(1, 64);
        RdmaRequest inFlight = queue.request(wire.reads.get(0));
        queue.close("test");
        assertThat(wire.shutdowns).isEqualTo(1);
        assertThat(queue.outstanding()).isEqualTo(1);
        assertThat(inFlight.state).isEqualTo(State.TRANSFERRING_HOST_TO_CONTROLLER);
        assertThat(wire.destroys).isZero();
        queue.onReadComplete(inFlight.index, true, false); // flushed
        assertThat(inFlight.state).isEqualTo(State.FREE);
        assertThat(queue.outstanding()).isZero();
        assertThat(wire.destroys).as("before LAST_WQE_REACHED").isZero();
        queue.onLastWqeReached();
        assertThat(wire.destroys).isEqualTo(1);
        assertThat(wire.reposted).containsExactlyInAnyOrder(0, 1);
        queue.onCapsule(3, 64); // after close: dropped, buffer reposted
        assertThat(wire.reposted).contains(3);
        queue.close("again");
        assertThat(wire.shutdowns).isEqualTo(1);
        assertThat(wire.destroys).isEqualTo(1);
    }

    /**
     * A host that goes away while one request's READs are in flight and another waits for read credits
     * (the e2e Java host killed at QD 32 with multi-descriptor writes): the waiting one is freed at close
     * and must leave the read queue, else the flushed READ completion spun the poll group forever.
     */
    @Test
    void closeWithARequestWaitingForReadCreditsFreesEverythingAndDoesNotSpin() {
        newQueue(4, 1);
        connectCapsule(0, 1, 0x40);
        connectCapsule(1, 2, 0x40);
        queue.onCapsule(0, 64);
        queue.onCapsule(1, 64);
        assertThat(wire.reads).hasSize(1);
        RdmaRequest inFlight = queue.request(wire.reads.get(0));
        RdmaRequest waiting = null;
        for (int i = 0; i < RdmaQueue.requestCount(32); i++) {
            if (queue.request(i).state == State.TRANSFER_PENDING_HOST_TO_CONTROLLER) {
                waiting = queue.request(i);
            }
        }
        assertThat(waiting).isNotNull();
        assertThat(waiting.waitingForRead).isTrue();

        queue.close("host gone");
        assertThat(waiting.state).isEqualTo(State.FREE);
        assertThat(waiting.waitingForRead).isFalse();
        assertThat(inFlight.state).isEqualTo(State.TRANSFERRING_HOST_TO_CONTROLLER);
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> queue.onReadComplete(inFlight.index, true, false));
        assertThat(inFlight.state).isEqualTo(State.FREE);
        assertThat(queue.outstanding()).isZero();
        assertThat(queue.buffers().available()).isEqualTo(4);
        assertThat(wire.reads).hasSize(1); // nothing read for the freed one
        queue.onLastWqeReached();
        assertThat(wire.destroys).isEqualTo(1);
    }

    /**
     * The host may send a command as soon as it has a response, before the response SEND's completion
     * is polled here (ACK delayed or lost): with every slot taken, such capsules wait in their receive
     * buffers and start, in order, as slots free up. More than a queue depth of them closes the queue.
     */
    @Test
    void capsulesBeyondTheSlotsWaitThenStartAndOnlyAnOverflowClosesTheQueue() {
        newQueue(64, 64);
        int slots = RdmaQueue.requestCount(32);
        for (int i = 0; i < slots; i++) {
            sqe(0, FABRICS, i, 0x04); // Property Get before Connect: answered at once, SEND not completed
            queue.onCapsule(0, 64);
        }
        assertThat(wire.responses).hasSize(slots);
        sqe(1, FABRICS, 1000, 0x04);
        queue.onCapsule(1, 64);
        sqe(2, FABRICS, 1001, 0x04);
        queue.onCapsule(2, 64);
        assertThat(queue.isClosing()).isFalse();
        assertThat(wire.responses).hasSize(slots); // parked: no slot yet
        assertThat(wire.reposted).doesNotContain(1, 2);

        queue.onSendComplete(wire.responses.get(0)[0], true); // one slot frees: the first parked capsule runs
        assertThat(wire.responses).hasSize(slots + 1);
        RdmaRequest first = queue.request(wire.responses.get(slots)[0]);
        assertThat(first.cid()).isEqualTo(1000);
        assertThat(wire.reposted).contains(1).doesNotContain(2);
        queue.onSendComplete(wire.responses.get(1)[0], true);
        assertThat(queue.request(wire.responses.get(slots + 1)[0]).cid()).isEqualTo(1001);

        // a queue depth (32) more than the slots may wait; one more is a host past its queue size
        for (int i = 0; i < 32; i++) {
            queue.onCapsule(3, 64);
        }
        assertThat(queue.isClosing()).isFalse();
        queue.onCapsule(4, 64);
        assertThat(queue.isClosing()).isTrue();
        assertThat(wire.reposted).contains(3, 4); // the parked receive buffers went back to the SRQ
    }

    /**
     * A host that does not acknowledge its responses (its SENDs never complete) and keeps sending holds
     * at most {@code maxParked} of the poll group's shared receive buffers: one capsule more closes its
     * queue pair and every parked buffer goes back to the SRQ; another queue pair on the same poll group
     * (same data buffers) carries on.
     */
    @Test
    void oneQueuePairHoldsAtMostMaxParkedReceiveBuffersAndTheOthersCarryOn() {
        DataBuffers pool = new DataBuffers(ByteBuffer.allocate(4 * 4096), 0, 0x10000, 4, 4096, 1);
        FakeWire otherWire = new FakeWire();
        ByteBuf otherResponses = Unpooled.buffer(RdmaQueue.requestCount(32) * RdmaQueue.CQE_SIZE);
        RdmaQueue other = new RdmaQueue(new CommandDispatcher(new Target()), limits, null, IoObserver.NONE,
            ImmediateEventExecutor.INSTANCE, pool, "other", 32, 16, 4, otherResponses);
        other.attach(otherWire);
        responses = Unpooled.buffer(RdmaQueue.requestCount(32) * RdmaQueue.CQE_SIZE);
        queue = new RdmaQueue(new CommandDispatcher(new Target()), limits, null, IoObserver.NONE,
            ImmediateEventExecutor.INSTANCE, pool, "stalled", 32, 16, 4, responses);
        queue.attach(wire);

        int slots = RdmaQueue.requestCount(32);
        for (int i = 0; i < slots; i++) {
            sqe(0, FABRICS, i, 0x04); // answered at once; the host never acknowledges the SENDs
            queue.onCapsule(0, 64);
        }
        for (int r = 1; r <= 4; r++) {
            sqe(r, FABRICS, 100 + r, 0x04);
            queue.onCapsule(r, 64);
        }
        assertThat(queue.isClosing()).as("4 parked: within the bound").isFalse();
        assertThat(wire.reposted.stream().filter(r -> r >= 1).toList()).isEmpty();
        sqe(5, FABRICS, 105, 0x04);
        queue.onCapsule(5, 64);
        assertThat(queue.isClosing()).as("the 5th parked capsule closes the queue pair").isTrue();
        assertThat(wire.reposted).contains(1, 2, 3, 4, 5);
        assertThat(wire.reposted.stream().filter(r -> r >= 1).count()).as("each parked buffer once").isEqualTo(5);

        // the other queue pair of the poll group still gets its command through, data buffer included
        connectCapsule(otherWire, 6, 77, 0x40);
        other.onCapsule(6, 64);
        assertThat(otherWire.reads).hasSize(1);
        other.onReadComplete(otherWire.reads.get(0), true, true);
        assertThat(otherWire.responses).hasSize(1);
    }

    /** The flushed completions of a QP in the error state: every posted READ chain and SEND completes. */
    private void flushPosted() {
        for (int i = 0; i < RdmaQueue.requestCount(32); i++) {
            RdmaRequest r = queue.request(i);
            if (r.state == State.COMPLETING) {
                queue.onSendComplete(i, false);
            } else if (r.state == State.TRANSFERRING_HOST_TO_CONTROLLER) {
                queue.onReadComplete(i, true, false);
            }
        }
    }

    /** An SQE with no data in receive buffer {@code recv}: opcode, cid and (fabrics) fctype. */
    private void sqe(int recv, int opcode, int cid, int fctype) {
        int at = recv * CAPSULE;
        wire.recv.setZero(at, 64);
        wire.recv.setByte(at, opcode);
        wire.recv.setByte(at + 1, 0x40); // PSDT 01b: SGLs
        wire.recv.setShortLE(at + 2, cid);
        wire.recv.setByte(at + 4, fctype);
    }

    /** Runs {@code recv} through capsule, execute and SEND completion; returns its status. */
    private int execute(int recv) {
        queue.onCapsule(recv, 64);
        RdmaRequest req = onlyBusy();
        assertThat(req.state).isEqualTo(State.COMPLETING);
        queue.onSendComplete(req.index, true);
        return status(req);
    }

    /** Admin Connect to the discovery subsystem (data by RDMA READ), then CC.EN = 1: an enabled controller. */
    private Controller connectDiscoveryAdmin() {
        connectCapsule(0, 1, 0x40);
        wire.recv.setShortLE(44, 31); // sqsize
        queue.onCapsule(0, 64);
        RdmaRequest connect = onlyBusy();
        connect.data.setZero(0, 1024);
        connect.data.setShortLE(16, 0xFFFF);
        connect.data.setCharSequence(256, Subsystem.DISCOVERY_NQN, StandardCharsets.US_ASCII);
        connect.data.setCharSequence(512, "nqn.2014-08.io.nvmf4j:test-host", StandardCharsets.US_ASCII);
        queue.onReadComplete(connect.index, true, true);
        queue.onSendComplete(connect.index, true);
        assertThat(status(connect)).isEqualTo(NvmeStatus.SUCCESS);
        assertThat(responses.getUnsignedShortLE(connect.index * RdmaQueue.CQE_SIZE + 8))
            .as("SQHD of the Connect response: the Connect was entry 0").isEqualTo(1);
        sqe(1, FABRICS, 2, 0x00); // Property Set CC: EN, IOSQES 6, IOCQES 4
        wire.recv.setIntLE(CAPSULE + 44, 0x14);
        wire.recv.setLongLE(CAPSULE + 48, 0x0046_0001L);
        assertThat(execute(1)).isEqualTo(NvmeStatus.SUCCESS);
        Controller c = queue.controller();
        assertThat(c.enabledAndReady()).isTrue();
        return c;
    }

    /**
     * A host (the Linux one always does) keeps an Async Event Request outstanding on the admin queue. The
     * controller held it and, torn down, dropped it: the request stayed EXECUTING, the queue pair never
     * drained, so its QP, CM id and CQ reservation were never freed (and the connection gauge never fell).
     */
    @Test
    void closeWithAnOutstandingAerFreesTheQueuePair() {
        PollGroupExecutor loop = new PollGroupExecutor();
        try {
            newQueue(4, 16, loop);
            connectDiscoveryAdmin();
            sqe(2, 0x0C, 3, 0);
            queue.onCapsule(2, 64);
            RdmaRequest aer = onlyBusy();
            assertThat(aer.state).isEqualTo(State.EXECUTING);

            queue.close("host gone");
            loop.runTasks();
            assertThat(aer.state).isEqualTo(State.FREE);
            assertThat(queue.outstanding()).isZero();
            queue.onLastWqeReached();
            assertThat(wire.destroys).isEqualTo(1);
            assertThat(wire.reposted).containsExactly(0, 1, 2);
        } finally {
            loop.shutdownNow();
        }
    }

    /**
     * Keep-alive expiry destroys the controller on the admin thread; the admin queue closes on a later
     * turn of the loop. An AER that arrives in between must not be held by the dead controller.
     */
    @Test
    void aerArrivingAfterControllerTeardownDoesNotKeepTheQueuePair() {
        PollGroupExecutor loop = new PollGroupExecutor();
        try {
            newQueue(4, 16, loop);
            Controller c = connectDiscoveryAdmin();
            sqe(2, 0x0C, 3, 0);
            queue.onCapsule(2, 64);
            c.destroy("keep-alive timeout"); // queues: drop the timer and the AERs; close the admin queue
            loop.runOne();
            sqe(3, 0x0C, 4, 0);
            queue.onCapsule(3, 64); // before the loop runs the close
            loop.runTasks();
            assertThat(queue.isClosing()).isTrue();
            flushPosted();
            assertThat(queue.outstanding()).isZero();
            queue.onLastWqeReached();
            assertThat(wire.destroys).isEqualTo(1);
        } finally {
            loop.shutdownNow();
        }
    }

    /** Identify Controller (4 KiB to the host by RDMA WRITE) in receive buffer {@code recv}. */
    private void identifyCapsule(int recv, int cid) {
        sqe(recv, 0x06, cid, 0);
        int at = recv * CAPSULE;
        wire.recv.setIntLE(at + 40, 1); // CNS 01h
        wire.recv.setLongLE(at + 24, 0x8000_0000L);
        wire.recv.setMediumLE(at + 32, 4096);
        wire.recv.setIntLE(at + 35, 0x5678);
        wire.recv.setByte(at + 39, 0x40);
    }

    private RdmaRequest inState(State state) {
        for (int i = 0; i < RdmaQueue.requestCount(32); i++) {
            if (queue.request(i).state == state) {
                return queue.request(i);
            }
        }
        return null;
    }

    /**
     * Teardown with WRITEs + SENDs in flight: the adapter may still read the data buffer (the WRITE) and
     * the response slot (the SEND) until their flushed completions arrive, so neither the buffer nor the
     * request may be handed back before; the QP is destroyed only once every request is back and the
     * device reported the last WQE reached (no receive of the SRQ is held by this QP any more).
     */
    @Test
    void teardownHoldsWriteAndSendBuffersUntilTheirFlushAndDestroysAfterLastWqe() {
        PollGroupExecutor loop = new PollGroupExecutor();
        try {
            newQueue(4, 16, loop);
            teardownWithWritesAndSendsInFlight();
        } finally {
            loop.shutdownNow();
        }
    }

    private void teardownWithWritesAndSendsInFlight() {
        connectDiscoveryAdmin();
        identifyCapsule(2, 10);
        queue.onCapsule(2, 64);
        RdmaRequest identify = inState(State.COMPLETING);
        assertThat(wire.responses.get(wire.responses.size() - 1)).containsExactly(identify.index, 1, 0);
        sqe(3, 0x18, 11, 0); // Keep Alive: the SEND of its response only
        queue.onCapsule(3, 64);
        RdmaRequest keepAlive = queue.request(wire.responses.get(wire.responses.size() - 1)[0]);
        assertThat(keepAlive.state).isEqualTo(State.COMPLETING);
        assertThat(queue.buffers().available()).isEqualTo(3);

        queue.close("host gone");
        assertThat(wire.shutdowns).isEqualTo(1);
        assertThat(identify.state).as("WRITE + SEND posted: waits for the flush").isEqualTo(State.COMPLETING);
        assertThat(queue.buffers().available()).as("the WRITE's data buffer is still the adapter's").isEqualTo(3);
        assertThat(keepAlive.state).isEqualTo(State.COMPLETING);
        assertThat(wire.destroys).isZero();

        queue.onSendComplete(identify.index, true); // flushed
        assertThat(identify.state).isEqualTo(State.FREE);
        assertThat(queue.buffers().available()).isEqualTo(4);
        assertThat(wire.destroys).isZero();
        queue.onSendComplete(keepAlive.index, false);
        assertThat(queue.outstanding()).isZero();
        assertThat(wire.reposted).containsExactlyInAnyOrder(0, 1, 2, 3); // each receive buffer once
        assertThat(wire.destroys).as("every request back, but the QP may still hold SRQ receives").isZero();
        queue.onLastWqeReached();
        assertThat(wire.destroys).isEqualTo(1);
        queue.onLastWqeReached(); // the timeout after the event: nothing more
        assertThat(wire.destroys).isEqualTo(1);
    }

    /** A Connect whose 1 KiB of data is behind a Last Segment of two keyed descriptors (two RDMA READs). */
    private void connectCapsuleTwoReads(int recv) {
        connectCapsule(recv, 5, 0x31);
        int at = recv * CAPSULE;
        wire.recv.setLongLE(at + 24, 0);
        wire.recv.setIntLE(at + 32, 32);
        for (int i = 0; i < 2; i++) {
            int d = at + 64 + i * 16;
            wire.recv.setLongLE(d, 0x7000_0000L + i * 4096);
            wire.recv.setMediumLE(d + 8, 512);
            wire.recv.setIntLE(d + 11, 0x1234);
            wire.recv.setByte(d + 15, 0x40);
        }
    }

    /**
     * Teardown with a chain of RDMA READs in flight: only the completion of the last (signalled) READ
     * frees the data buffer (the send queue completes in order); an earlier READ's flushed completion
     * must not, since the adapter may still write the later READs' data into the buffer.
     */
    @Test
    void teardownHoldsAReadBufferUntilTheLastReadOfTheChainCompletes() {
        connectCapsuleTwoReads(0);
        queue.onCapsule(0, 64 + 32);
        RdmaRequest req = inState(State.TRANSFERRING_HOST_TO_CONTROLLER);
        assertThat(req).isNotNull();
        assertThat(req.sgl.count).isEqualTo(2);
        assertThat(queue.buffers().available()).isEqualTo(3);

        queue.close("host gone");
        queue.onReadComplete(req.index, false, false); // the first READ, flushed
        assertThat(req.state).isEqualTo(State.TRANSFERRING_HOST_TO_CONTROLLER);
        assertThat(queue.buffers().available()).as("the second READ may still write into it").isEqualTo(3);
        queue.onLastWqeReached();
        assertThat(wire.destroys).isZero();
        queue.onReadComplete(req.index, true, false); // the last READ, flushed
        assertThat(req.state).isEqualTo(State.FREE);
        assertThat(queue.buffers().available()).isEqualTo(4);
        assertThat(wire.destroys).isEqualTo(1);
        assertThat(wire.reposted).containsExactly(0);
    }

    /** A failed RDMA READ that is not the last of its chain (so unsignalled) closes the queue pair at once. */
    @Test
    void aFailedEarlierReadClosesTheQueue() {
        connectCapsuleTwoReads(0);
        queue.onCapsule(0, 64 + 32);
        RdmaRequest req = inState(State.TRANSFERRING_HOST_TO_CONTROLLER);
        queue.onReadComplete(req.index, false, false); // remote access error on the first READ
        assertThat(queue.isClosing()).isTrue();
        assertThat(wire.shutdowns).isEqualTo(1);
        assertThat(req.state).isEqualTo(State.TRANSFERRING_HOST_TO_CONTROLLER);
    }

    /** LAST_WQE_REACHED before any close (the QP failed on its own) closes and, once drained, destroys. */
    @Test
    void lastWqeReachedWithoutACloseClosesAndDestroys() {
        sqe(1, FABRICS, 3, 0x04);
        queue.onCapsule(1, 64);
        RdmaRequest req = onlyBusy();
        assertThat(req.state).isEqualTo(State.COMPLETING);
        queue.onLastWqeReached();
        assertThat(queue.isClosing()).isTrue();
        assertThat(wire.destroys).isZero();
        queue.onSendComplete(req.index, false);
        assertThat(wire.destroys).isEqualTo(1);
    }
}
