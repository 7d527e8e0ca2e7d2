package io.nvmf4j.transport.rdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.IoEventLoop;
import io.netty.channel.unix.FileDescriptor;
import io.nvmf4j.config.RdmaTransportConfig;
import io.nvmf4j.rdma.Completions;
import io.nvmf4j.rdma.Errno;
import io.nvmf4j.rdma.HugepageArena;
import io.nvmf4j.rdma.Rdma;
import io.nvmf4j.rdma.RecvWorkRequests;
import io.nvmf4j.rdma.Verbs;
import io.nvmf4j.runtime.FatalErrors;
import io.nvmf4j.runtime.FdWatch;
import io.nvmf4j.runtime.IdleStrategies;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Arrays;

/**
 * The RDMA side of one poll group on one device: a CQ with its completion channel, a shared receive
 * queue of capsule buffers and a pool of data buffers, all carved from one registered region, and the
 * queue pairs that live here. Owned by the poll group's Netty event loop.
 *
 * <p>Integration with the poll group: the event loop watches the completion channel's fd ({@link FdWatch},
 * level-triggered, in its epoll or as a poll in its io_uring), and the CQ stays armed. When a completion
 * arrives the loop calls {@link #onChannelEvent}: take the channel events, ack them, re-arm, then poll the CQ
 * until it is empty (arm before the last poll, so nothing is missed). The poll group's idle strategy
 * (busy, backoff, interrupt) is the event loop's, as for TCP: when idle, the thread blocks in epoll (or
 * io_uring) on the completion channel with the TCP sockets, so the {@code interrupt} strategy is the natural one and
 * no poll group burns a core while idle. Requests complete on this thread, and asynchronous block-device
 * completions come back through {@link #loop} ({@code Queue.executor()}).
 *
 * <p>Polled mode: the poll group's idle strategy polls the CQ on every pass ({@link IdleStrategies.Poller})
 * and arms it only before blocking in epoll, so a {@code busy} poll group never arms it (no interrupt, no
 * completion-channel read, no re-arm per completion) and {@code backoff} arms it only once it stops
 * spinning. The completion channel then only wakes a blocked loop.
 *
 * <p>Completions are routed by the tag in {@code wr_id}: type (bits 63..60), {@link #LAST} (bit 59: the
 * last, signalled work request of a request's chain), queue-pair slot in this group (bits 39..24),
 * request or receive-buffer index (bits 23..0).
 */
final class RdmaPollGroup implements IdleStrategies.Poller {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaPollGroup.class);
    static final long TYPE_RECV = 1;
    static final long TYPE_READ = 2;
    static final long TYPE_WRITE = 3;
    static final long TYPE_SEND = 4;
    /** Tag bit of the last work request of a request's chain (the one whose completion ends it). */
    static final long LAST = 1L << 59;
    private static final int POLL_BATCH = 32;

    final IoEventLoop loop;
    final RdmaDevice device;
    final int capsuleSize;
    private final long compChannel;
    private final long cq;
    private final long srq;
    private final HugepageArena arena;
    private final long mr;
    final int lkey;
    private final ByteBuf recvBuffer;
    /** Per receive buffer, its in-capsule data area (bytes 64.. of the capsule): slices made once. */
    private final ByteBuf[] capsuleData;
    private final RecvWorkRequests recvWrs;
    private final int srqDepth;
    final DataBuffers buffers;
    private final Completions wcs = new Completions(POLL_BATCH);
    private final int cqSize;
    /** Summed depth of the queue pairs placed here (guarded by this, written by the CM thread). */
    private int reservedDepth;
    private QueuePair[] slots = new QueuePair[8];
    /** The same queue pairs by QP number, for receive completions (they carry no slot). */
    private final QpTable<QueuePair> byQpNum = new QpTable<>();
    private int active;
    /** The poll group's strategy polls this CQ on every pass; it is armed only before blocking. */
    private boolean polled;
    /** The CQ is armed: its next completion raises an event on the completion channel. */
    private boolean armed;
    /** Inside a pass over the CQ: posts are gathered and go out at its end ({@link #postGathered}). */
    private boolean gathering;
    /** Receives to post again at the end of the pass, as one chain. */
    private RecvWorkRequests recvBatch;
    private int recvPending;
    /** Queue pairs with send work requests gathered in this pass. */
    private QueuePair[] sendPending = new QueuePair[8];
    private int sendPendingCount;

    static long tag(long type, int slot, int index) {
        return (type << 60) | ((long) slot << 24) | index;
    }

    RdmaPollGroup(IoEventLoop loop, RdmaDevice device, RdmaTransportConfig config) throws IOException {
        this.loop = loop;
        this.device = device;
        this.capsuleSize = 64 + config.inCapsuleDataSize;
        this.srqDepth = Math.min(config.srqDepth, device.attributes.maxSrqWr());
        this.cqSize = Math.min(config.cqSize, device.attributes.maxCqe());
        long ctx = device.context;
        compChannel = check(Verbs.createCompChannel(ctx), "ibv_create_comp_channel");
        int cfd = Verbs.compChannelFd(compChannel);
        check(Rdma.setNonBlocking(cfd, true), "O_NONBLOCK on the completion channel");
        cq = check(Verbs.createCq(ctx, cqSize, compChannel, 0), "ibv_create_cq(" + cqSize + ")");
        srq = check(Verbs.createSrq(device.pd, srqDepth, 1, 0), "ibv_create_srq(" + srqDepth + ")");
        long recvBytes = (long) srqDepth * capsuleSize;
        long recvRegion = (recvBytes + 4095) / 4096 * 4096;
        long size = recvRegion + (long) config.dataBuffers * config.mdtsBytes;
        arena = HugepageArena.allocate(size, config.hugepages);
        // local access only: this side initiates every RDMA READ and WRITE, a host never needs a key to this
        // memory, and the protection domain is shared by every queue pair of the device, so remote access
        // would let any connected host that learns or guesses the key read or overwrite other hosts' data
        // (iWARP needs remote write on the sink of an RDMA READ: Verbs.localAccess adds it there)
        int access = Verbs.localAccess(device.context);
        mr = check(Verbs.regMr(device.pd, arena.address(), arena.size(), access), "ibv_reg_mr(" + size + ")");
        lkey = Verbs.lkey(mr);
        LOG.debug("rdma poll group region on {}: 0x{} + {} B, lkey 0x{} rkey 0x{}, access 0x{}", device.name,
            Long.toHexString(arena.address()), arena.size(), Integer.toHexString(lkey),
            Integer.toHexString(Verbs.rkey(mr)), Integer.toHexString(access));
        recvBuffer = Unpooled.wrappedBuffer(arena.buffer().duplicate().clear().limit((int) recvBytes).slice());
        buffers = new DataBuffers(arena.buffer(), (int) recvRegion, arena.address() + recvRegion, config.dataBuffers,
            config.mdtsBytes, lkey);
        capsuleData = new ByteBuf[srqDepth];
        for (int i = 0; i < srqDepth; i++) {
            capsuleData[i] = recvBuffer.slice(i * capsuleSize + 64, capsuleSize - 64);
        }
        recvWrs = new RecvWorkRequests(srqDepth, 1);
        for (int i = 0; i < srqDepth; i++) {
            recvWrs.set(i, tag(TYPE_RECV, 0, i), arena.address() + (long) i * capsuleSize, capsuleSize, lkey);
        }
        check(Verbs.postSrqRecv(srq, recvWrs, 0, srqDepth), "posting " + srqDepth + " receives");
        recvBatch = new RecvWorkRequests(srqDepth, 1);
        check(Verbs.reqNotifyCq(cq, false), "ibv_req_notify_cq");
        armed = true;
        try {
            FdWatch.watch(loop, new FileDescriptor(cfd), "the completion channel of " + device.name, this::onChannelEvent);
        } catch (IllegalStateException e) {
            throw new IOException("watching the completion channel from the poll group: " + e.getMessage(), e);
        }
        loop.execute(() -> {
            IdleStrategies.Accounting strategy = IdleStrategies.current();
            if (strategy != null) {
                strategy.addPoller(this);
                polled = true;
            }
        });
        LOG.info("rdma poll group on {} ({}): cq {} entries, srq {} capsules of {} B, {} data buffers of {} KiB, "
                + "{} MiB {}", device.name, loop, cqSize, srqDepth, capsuleSize, config.dataBuffers,
            config.mdtsBytes / 1024, size >> 20, arena.isHugepageBacked() ? "in hugepages" : "in normal pages");
    }

    private static long check(long rc, String what) throws IOException {
        if (rc < 0) {
            throw new IOException(what + ": " + Errno.describe((int) rc));
        }
        return rc;
    }

    /** Reserves CQ room for a queue pair of {@code depth} (two signalled completions per request at most). */
    synchronized boolean reserve(int depth) {
        int need = 2 * RdmaQueue.requestCount(depth);
        if (reservedDepth + need + srqDepth > cqSize) {
            return false;
        }
        reservedDepth += need;
        return true;
    }

    synchronized void unreserve(int depth) {
        reservedDepth -= 2 * RdmaQueue.requestCount(depth);
    }

    synchronized int load() {
        return reservedDepth;
    }

    // ---------------------------------------------------------------- queue pairs (poll-group thread)

    /** Places a queue pair in a slot; its completions are routed from now on. */
    void attach(QueuePair qp) {
        assert loop.inEventLoop();
        int slot = -1;
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] == null) {
                slot = i;
                break;
            }
        }
        if (slot < 0) {
            slot = slots.length;
            slots = Arrays.copyOf(slots, slots.length * 2);
        }
        slots[slot] = qp;
        qp.slot = slot;
        byQpNum.put(qp.qpNum, qp);
        active++;
    }

    void detach(QueuePair qp) {
        assert loop.inEventLoop();
        if (qp.slot >= 0 && slots[qp.slot] == qp) {
            slots[qp.slot] = null;
            byQpNum.remove(qp.qpNum, qp);
            active--;
        }
    }

    long cqHandle() {
        return cq;
    }

    long srqHandle() {
        return srq;
    }

    ByteBuf recvBuffer() {
        return recvBuffer;
    }

    ByteBuf capsuleData(int index) {
        return capsuleData[index];
    }

    int recvOffset(int index) {
        return index * capsuleSize;
    }

    /**
     * Gives receive buffer {@code index} back to the SRQ: gathered during a pass over the CQ and posted with
     * the others at its end (one {@code ibv_post_srq_recv} per pass), else at once.
     */
    void repostRecv(int index) {
        if (!gathering) {
            int rc = Verbs.postSrqRecv(srq, recvWrs, index, 1);
            if (rc < 0) {
                LOG.warn("reposting receive {} on {}: {}", index, device.name, Errno.describe(rc));
            }
            return;
        }
        if (recvPending == recvBatch.capacity()) {
            postReceives();
        }
        recvBatch.set(recvPending++, recvWrs.wrId(index), arena.address() + (long) index * capsuleSize, capsuleSize,
            lkey);
    }

    private void postReceives() {
        int n = recvPending;
        if (n == 0) {
            return;
        }
        recvPending = 0;
        int rc = Verbs.postSrqRecv(srq, recvBatch, 0, n);
        if (rc < 0) {
            LOG.warn("reposting {} receives on {}: {} (from the {}th on)", n, device.name, Errno.describe(rc),
                recvBatch.badIndex());
        }
    }

    /** Posts are being gathered for the end of the pass (see {@link QueuePair}). */
    boolean gathering() {
        return gathering;
    }

    /** {@code qp} has send work requests gathered: posted at the end of the pass. */
    void postAtEndOfPass(QueuePair qp) {
        if (qp.listed) {
            return;
        }
        qp.listed = true;
        if (sendPendingCount == sendPending.length) {
            sendPending = Arrays.copyOf(sendPending, sendPending.length * 2);
        }
        sendPending[sendPendingCount++] = qp;
    }

    /** The end of a pass: the receives given back, then each queue pair's sends, one chain each. */
    private void postGathered() {
        gathering = false;
        postReceives();
        for (int i = 0; i < sendPendingCount; i++) {
            QueuePair qp = sendPending[i];
            sendPending[i] = null;
            qp.listed = false;
            qp.postPending();
        }
        sendPendingCount = 0;
    }

    // ---------------------------------------------------------------- completions

    /** The completion channel is readable (the loop's thread). */
    private void onChannelEvent() {
        try {
            // one event per arm (the CQ is re-armed once below), so one read: a second one would only
            // return EAGAIN, a system call per wakeup for nothing; the fd is level-triggered, so an event
            // left in the channel wakes the loop again
            if (Verbs.getCqEvent(compChannel) > 0) {
                Verbs.ackCqEvents(cq, 1);
                armed = false;
            }
            pollAll();
            if (!polled) {
                Verbs.reqNotifyCq(cq, false);
                armed = true;
                pollAll();
            } // else the strategy polls on every pass and arms before it blocks
            buffers.runWaiters();
        } catch (Error e) {
            // Netty would end the poll group's event loop on it; the process stops instead, the loop serving the stop
            FatalErrors.raise(e);
        }
    }

    @Override
    public int poll() {
        try {
            int n = pollAll();
            if (n > 0) {
                buffers.runWaiters();
            }
            return n;
        } catch (Error e) {
            FatalErrors.raise(e);
            return 0;
        }
    }

    @Override
    public int beforeBlocking() {
        if (!armed) {
            Verbs.reqNotifyCq(cq, false);
            armed = true;
        }
        return poll();
    }

    /** Polls the CQ until it is empty; returns the completions taken. */
    private int pollAll() {
        int n;
        int total = 0;
        gathering = true;
        try {
            do {
                n = Verbs.pollCq(cq, wcs, POLL_BATCH);
                if (n < 0) {
                    LOG.error("ibv_poll_cq on {}: {}", device.name, Errno.describe(n));
                    return total;
                }
                for (int i = 0; i < n; i++) {
                    dispatch(i);
                }
                total += n;
            } while (n == POLL_BATCH);
            return total;
        } finally {
            postGathered();
        }
    }

    private void dispatch(int i) {
        long wrId = wcs.wrId(i);
        int type = (int) (wrId >>> 60);
        boolean last = (wrId & LAST) != 0;
        int index = (int) (wrId & 0xFFFFFF);
        boolean ok = wcs.isSuccess(i);
        if (type == TYPE_RECV) {
            if (!ok) {
                // a receive a queue pair had taken from the SRQ and then flushed (its QP went to the error
                // state) is no longer posted anywhere: post it again, or every teardown would shrink the SRQ
                if (wcs.status(i) != Verbs.WC_WR_FLUSH_ERR) {
                    LOG.warn("receive {} on {} failed: {}", index, device.name, Verbs.wcStatusName(wcs.status(i)));
                }
                repostRecv(index);
                return;
            }
            QueuePair qp = byQpNum.get(wcs.qpNum(i));
            if (qp == null) {
                repostRecv(index);
                return;
            }
            qp.queue.onCapsule(index, wcs.byteLen(i));
            return;
        }
        int slot = (int) ((wrId >>> 24) & 0xFFFF);
        QueuePair qp = slot < slots.length ? slots[slot] : null;
        if (qp == null || qp.qpNum != wcs.qpNum(i)) {
            return; // a late (flushed) completion of a queue pair that is gone
        }
        if (!ok) {
            int status = wcs.status(i);
            if (status != Verbs.WC_WR_FLUSH_ERR) {
                LOG.info("{}: work request failed: {} (vendor error 0x{})", qp.queue, Verbs.wcStatusName(status),
                    Integer.toHexString(wcs.vendorErr(i)));
            }
            qp.queue.onWorkRequestError("work request failed: " + Verbs.wcStatusName(status));
        }
        if (type == TYPE_READ) {
            qp.queue.onReadComplete(index, last, ok);
        } else if (type == TYPE_WRITE) {
            qp.queue.onWriteComplete(index, ok);
        } else if (type == TYPE_SEND) {
            qp.queue.onSendComplete(index, ok);
        }
    }

    @Override
    public String toString() {
        return "rdma poll group " + device.name + "/" + loop + " (" + active + " queue pairs)";
    }
}
