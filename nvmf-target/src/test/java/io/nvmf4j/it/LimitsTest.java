package io.nvmf4j.it;

import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Pdu;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Limits with a clear error at the limit (issue 15): controllers per subsystem (its cntlid range, as nvmet's
 * cntlid_min/cntlid_max and SPDK's min_cntlid/max_cntlid: one more admin Connect gets Connect Controller Busy),
 * I/O queues per controller (a Connect with a QID above the queues Set Features Number of Queues granted gets
 * Connect Invalid Parameters pointing at the QID), and outstanding R2Ts (one per command, for the whole
 * transfer, whatever MAXR2T the host gave). The TCP connection limits are TcpConnectionLimitTest's, the API's
 * request rate RateLimitTest's (mgmt-api).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LimitsTest {
    private static final int SCT_COMMAND_SPECIFIC = 1;
    private static final int SC_CONNECT_CONTROLLER_BUSY = 0x81;
    private static final int SC_CONNECT_INVALID_PARAMETERS = 0x82;
    private static final int SQE_QID = 42;
    private static final int SC_AER_LIMIT_EXCEEDED = 0x05;

    @Test
    void aSubsystemHoldsAsManyControllersAsItsCntlidRangeAndTheNextConnectIsControllerBusy() throws Exception {
        CountingObserver observer = new CountingObserver();
        try (TestTarget target = TestTarget.start(c -> {
            c.subsystems.get(0).minCntlid = 10;
            c.subsystems.get(0).maxCntlid = 11;
        }, observer)) {
            NvmeController first = target.controller(1, TcpHostOptions.DEFAULT);
            try (NvmeController second = target.controller(1, TcpHostOptions.DEFAULT)) {
                assertThat(new int[] {first.cntlid(), second.cntlid()}).containsExactlyInAnyOrder(10, 11);
                try (LogCapture log = new LogCapture("io.nvmf4j.engine.ControllerLog");
                     TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
                    Completion busy = new NvmeHost(h, TestTarget.BLOCK_SIZE).fabricsConnect(0, 31, 0xFFFF,
                        TestTarget.KATO_MS, TestTarget.HOSTNQN, TestTarget.SUBNQN,
                        NvmeController.hostIdFor(TestTarget.HOSTNQN)).completion();
                    // no DNR: a controller going away makes room, so the host may retry (SPDK answers the same)
                    TestTarget.assertStatus(busy, SCT_COMMAND_SPECIFIC, SC_CONNECT_CONTROLLER_BUSY, false);
                    assertThat(observer.controllerLimitReached()).as("counted for the metric").isEqualTo(1);
                    assertThat(log.await("controller limit reached: every cntlid of minCntlid..maxCntlid 10..11 is "
                        + "in use", Duration.ofSeconds(5))).as("the refusal's log line").isNotNull();
                }
                TestTarget.assertWriteReadBack(second.io(0), 0, 4096, 1);
                first.close();
                // the freed cntlid is taken by the next host once its controller is gone (asynchronously)
                NvmeController third = null;
                for (int i = 0; i < 50 && third == null; i++) {
                    try {
                        third = target.controller(1, TcpHostOptions.DEFAULT);
                    } catch (IllegalStateException stillBusy) {
                        Thread.sleep(100);
                    }
                }
                assertThat(third).as("a Connect once a controller went away").isNotNull();
                assertThat(third.cntlid()).isEqualTo(first.cntlid());
                third.close();
            }
        }
    }

    @Test
    void anIoQueueConnectAboveTheGrantedQueuesIsInvalidParametersAtTheQid() throws Exception {
        try (TestTarget target = TestTarget.start(c -> c.tcp.maxIoQueues = 4);
             NvmeController c = target.controller(2, TcpHostOptions.DEFAULT)) {
            byte[] hostid = NvmeController.hostIdFor(TestTarget.HOSTNQN);
            // NvmeController asked for 2 queues: qid 3 is beyond them
            assertRefusedAtQid(target, c.cntlid(), 3, hostid);
            // a controller asking for more than maxIoQueues is granted maxIoQueues (NSQA/NCQA 0's based in dw0)
            try (NvmeController d = NvmeController.open(TestTarget.ADDRESS, target.port, TestTarget.SUBNQN,
                    TestTarget.HOSTNQN, TestTarget.KATO_MS, 0, TcpHostOptions.DEFAULT);
                 TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
                Completion grant = d.admin().setFeatures(NvmeController.FID_NUMBER_OF_QUEUES, 63 | (63 << 16));
                assertThat(grant.ok()).as("%s", grant).isTrue();
                assertThat(grant.dw0()).isEqualTo(3 | (3 << 16));
                Completion ok = new NvmeHost(h, TestTarget.BLOCK_SIZE).fabricsConnect(4, 31, d.cntlid(), 0,
                    TestTarget.HOSTNQN, TestTarget.SUBNQN, hostid).completion();
                assertThat(ok.ok()).as("qid 4 of the 4 granted: %s", ok).isTrue();
                assertRefusedAtQid(target, d.cntlid(), 5, hostid);
            }
            TestTarget.assertWriteReadBack(c.io(1), 64, 8192, 2);
        }
    }

    /**
     * Async Event Requests held: AERL 3 (0's based) lets a controller hold four; the fifth is Asynchronous Event
     * Request Limit Exceeded and the four stay held, each completed by the next events.
     */
    @Test
    void aFifthAsyncEventRequestIsLimitExceededAndTheFourHeldStay() throws Exception {
        try (TestTarget target = TestTarget.start(); NvmeController c = target.controller(1, TcpHostOptions.DEFAULT)) {
            assertThat(Le.u8(c.admin().identify(0x01, 0, 0).data(), 259)).as("AERL").isEqualTo(3);
            assertThat(c.admin().setFeatures(0x0B, 1 << 8).ok()).isTrue();
            java.util.List<java.util.concurrent.CompletableFuture<Completion>> held = new java.util.ArrayList<>();
            for (int i = 0; i < 4; i++) {
                held.add(c.admin().asyncEventRequest());
            }
            Completion fifth = c.admin().await(c.admin().asyncEventRequest());
            TestTarget.assertStatus(fifth, SCT_COMMAND_SPECIFIC, SC_AER_LIMIT_EXCEEDED, true);
            assertThat(held).as("the four held").noneMatch(java.util.concurrent.CompletableFuture::isDone);
            target.nvmf().removeNamespace(TestTarget.SUBNQN, 3);
            assertThat(held.get(0).get(10, TimeUnit.SECONDS).ok()).as("the first held gets the event").isTrue();
        }
    }

    private static void assertRefusedAtQid(TestTarget target, int cntlid, int qid, byte[] hostid) throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            Completion r = new NvmeHost(h, TestTarget.BLOCK_SIZE).fabricsConnect(qid, 31, cntlid, 0,
                TestTarget.HOSTNQN, TestTarget.SUBNQN, hostid).completion();
            // DNR: the same Connect cannot succeed later (nvmet sets it too)
            TestTarget.assertStatus(r, SCT_COMMAND_SPECIFIC, SC_CONNECT_INVALID_PARAMETERS, true);
            assertThat(r.dw0()).as("IATTR 0 (in the SQE), IPO at QID").isEqualTo(SQE_QID);
        }
    }

    /**
     * Outstanding R2Ts: the host's ICReq says MAXR2T 0 (one R2T per command, the least a host may say). Two writes
     * beyond the in-capsule size get one R2T each, asking for the whole transfer, and nothing more while their data
     * is not sent; once it is, both complete and the data reads back.
     */
    @Test
    void eachWriteGetsOneR2tForItsWholeTransferWithinMaxR2tZero() throws Exception {
        try (TestTarget target = TestTarget.start();
             NvmeController c = target.controller(1, TcpHostOptions.DEFAULT.withInCapsuleDataSize(4096))) {
            TcpHost q = c.io(0).queue();
            int[] cids = {TcpHost.RAW_CID_BASE + 1, TcpHost.RAW_CID_BASE + 2};
            int[] lengths = {65536, 32768};
            long[] lbas = {0, 1024};
            for (int i = 0; i < 2; i++) {
                q.sendRaw(q.encodeCapsule(Sqe.of(NvmeHost.OPC_WRITE).cid(cids[i]).nsid(1).cdw(10, (int) lbas[i])
                    .cdw(12, lengths[i] / TestTarget.BLOCK_SIZE - 1).sgl(Sqe.SGL_TRANSPORT, 0, lengths[i]), null));
            }
            Map<Integer, Integer> ttags = new HashMap<>();
            for (int i = 0; i < 2; i++) {
                Pdu r2t = q.readPdu(Duration.ofSeconds(10));
                assertThat(r2t.type()).as("%s", r2t).isEqualTo(Pdu.R2T);
                int cid = r2t.u16(8);
                int k = cid == cids[0] ? 0 : 1;
                assertThat(cid).isIn(cids[0], cids[1]);
                assertThat(r2t.u32(12)).as("R2TO").isZero();
                assertThat(r2t.u32(16)).as("R2TL: the whole transfer").isEqualTo(lengths[k]);
                assertThat(ttags.put(cid, r2t.u16(10))).as("a second R2T for cid %d", cid).isNull();
            }
            assertThatThrownBy(() -> q.readPdu(Duration.ofMillis(500))).as("nothing more while the data is owed")
                .isInstanceOf(SocketTimeoutException.class);
            long max = q.icResp().maxH2cData() > 0 ? q.icResp().maxH2cData() : Integer.MAX_VALUE;
            byte[][] data = {Le.random(lengths[0], 3), Le.random(lengths[1], 4)};
            for (int k = 1; k >= 0; k--) { // the second command's data first: R2Ts are answered in any order
                for (int off = 0; off < lengths[k]; off += (int) max) {
                    int end = (int) Math.min(lengths[k], off + max);
                    q.sendRaw(q.encodeH2cData(cids[k], ttags.get(cids[k]), off, Arrays.copyOfRange(data[k], off, end),
                        end == lengths[k]));
                }
            }
            for (int i = 0; i < 2; i++) {
                Pdu resp = q.readPdu(Duration.ofSeconds(10));
                assertThat(resp.type()).as("%s", resp).isEqualTo(Pdu.CAPSULE_RESP);
                Completion done = Completion.fromCapsuleResp(resp, null);
                assertThat(done.ok()).as("%s", done).isTrue();
            }
            for (int k = 0; k < 2; k++) {
                Completion rd = c.io(0).read(1, lbas[k], lengths[k] / TestTarget.BLOCK_SIZE);
                assertThat(rd.ok()).isTrue();
                assertThat(rd.data()).isEqualTo(data[k]);
            }
            assertThat(q.protocolErrors()).isEmpty();
        }
    }
}
