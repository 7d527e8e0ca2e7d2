package io.nvmf4j.it;

import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Pdu;
import io.nvmf4j.testhost.PduCodec;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import io.nvmf4j.testhost.TermReq;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Malformed NVMe/TCP framing. Each case checks the exact TermReq (or status) and then that a
 * healthy controller, connected before the bad connection, still writes and reads correctly.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TcpBadInputTest {
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final int RAW_CID = TcpHost.RAW_CID_BASE + 1;

    static TestTarget target;
    static NvmeController healthy;
    static final AtomicLong seed = new AtomicLong(100);

    @BeforeAll
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void start() throws Exception {
        target = TestTarget.start();
        healthy = target.controller(1, TcpHostOptions.DEFAULT);
    }

    @AfterAll
    static void stop() {
        if (healthy != null) {
            healthy.close();
        }
        if (target != null) {
            target.close();
        }
    }

    @AfterEach
    void healthyControllerStillWorks() {
        assertThat(healthy.admin().keepAlive().ok()).as("healthy admin queue").isTrue();
        TestTarget.assertWriteReadBack(healthy.io(0), 50_000, 8192, seed.incrementAndGet());
    }

    /** Reads the next PDU: a C2HTermReq with this FES (and FEI unless null); then the socket closes. */
    private static void assertTerminated(TcpHost h, int fes, Integer fei) throws Exception {
        Pdu p = h.readPdu(WAIT);
        assertThat(p.type()).as("PDU type of %s", p).isEqualTo(Pdu.C2H_TERM_REQ);
        TermReq t = TermReq.of(p);
        assertThat(t.fes()).as("FES of %s", t).isEqualTo(fes);
        if (fei != null) {
            assertThat(t.fei()).as("FEI of %s", t).isEqualTo(fei.longValue());
        }
        assertThat(h.awaitClosed(WAIT)).as("connection closed by the target").isTrue();
    }

    private static Sqe keepAliveSqe() {
        return Sqe.of(NvmeHost.OPC_KEEP_ALIVE).cid(RAW_CID).sgl(Sqe.SGL_TRANSPORT, 0, 0);
    }

    private static byte[] writeSqeInCapsule(int bytes) {
        return NvmeHost.rw(NvmeHost.OPC_WRITE, 1, 0, bytes / 512).cid(RAW_CID).sgl(Sqe.SGL_IN_CAPSULE, 0, bytes).toBytes();
    }

    @Test
    void unknownPduType() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            h.sendRaw(PduCodec.encode(0x0F, 0, new byte[16], null, false, false));
            assertTerminated(h, TermReq.FES_INVALID_HEADER_FIELD, 0);
        }
    }

    @Test
    void badHlenOnCapsuleCmd() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            byte[] pdu = h.encodeCapsule(keepAliveSqe(), null);
            pdu[2] = 0x10;
            h.sendRaw(pdu);
            assertTerminated(h, TermReq.FES_INVALID_HEADER_FIELD, 2);
        }
    }

    @Test
    void plenSmallerThanHlen() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            byte[] pdu = h.encodeCapsule(keepAliveSqe(), null);
            Le.putU32(pdu, 4, 64);
            h.sendRaw(pdu);
            assertTerminated(h, TermReq.FES_INVALID_HEADER_FIELD, 4);
        }
    }

    @Test
    void pdoBelowHlen() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            byte[] pdu = PduCodec.encode(Pdu.CAPSULE_CMD, 0, writeSqeInCapsule(512), new byte[512], false, false);
            pdu[3] = 40;
            h.sendRaw(pdu);
            assertTerminated(h, TermReq.FES_INVALID_HEADER_FIELD, 3);
        }
    }

    @Test
    void plenBeyondInCapsuleLimit() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            byte[] pdu = h.encodeCapsule(keepAliveSqe(), null);
            pdu[3] = 72;
            Le.putU32(pdu, 4, 72 + (16 << 20));
            h.sendRaw(pdu);
            assertTerminated(h, TermReq.FES_INVALID_HEADER_FIELD, 4);
        }
    }

    @Test
    void capsuleCmdBeforeIcReq() throws Exception {
        try (TcpHost h = target.rawTcp()) {
            h.sendRaw(h.encodeCapsule(keepAliveSqe(), null));
            assertTerminated(h, TermReq.FES_PDU_SEQUENCE_ERROR, 0);
        }
    }

    @Test
    void secondIcReq() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            h.sendRaw(TcpHost.icReq(0, false, false));
            assertTerminated(h, TermReq.FES_PDU_SEQUENCE_ERROR, null);
        }
    }

    @Test
    void icReqWithUnsupportedPfv() throws Exception {
        try (TcpHost h = target.rawTcp()) {
            h.sendRaw(TcpHost.icReq(1, false, false));
            assertTerminated(h, TermReq.FES_UNSUPPORTED_PARAMETER, 8);
        }
    }

    @Test
    void headerDigestMismatch() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DIGESTS)) {
            assertThat(h.icResp().headerDigest()).as("header digest negotiated").isTrue();
            byte[] pdu = h.encodeCapsule(keepAliveSqe(), null);
            pdu[72] ^= (byte) 0xFF;
            h.sendRaw(pdu);
            assertTerminated(h, TermReq.FES_HEADER_DIGEST_ERROR, 0);
        }
    }

    @Test
    void dataDigestMismatchFailsTheCommandOnly() throws Exception {
        try (NvmeController c = target.controller(1, TcpHostOptions.DIGESTS)) {
            NvmeHost io = c.io(0);
            byte[] old = Le.random(4096, 1);
            assertThat(io.write(1, 60_000, old).ok()).isTrue();
            Sqe write = NvmeHost.rw(NvmeHost.OPC_WRITE, 1, 60_000, 8).cid(RAW_CID).sgl(Sqe.SGL_IN_CAPSULE, 0, 4096);
            byte[] pdu = io.queue().encodeCapsule(write, Le.random(4096, 2));
            pdu[pdu.length - 1] ^= (byte) 0xFF;
            io.queue().sendRaw(pdu);
            Pdu resp = io.queue().readPdu(WAIT);
            assertThat(resp.type()).as("PDU type of %s", resp).isEqualTo(Pdu.CAPSULE_RESP);
            Completion cqe = Completion.fromCapsuleResp(resp, null);
            assertThat(cqe.cid()).isEqualTo(RAW_CID);
            assertStatus(cqe, 0, 0x22, false);
            Completion back = io.read(1, 60_000, 8);
            assertThat(back.ok()).as("queue still usable: %s", back).isTrue();
            assertThat(back.data()).as("old data kept").isEqualTo(old);
            TestTarget.assertWriteReadBack(io, 60_000, 4096, 3);
        }
    }

    /** Sends a 16 KiB write with a transport SGL and returns the R2T it gets. */
    private static Pdu startR2tWrite(TcpHost q) throws IOException {
        Sqe write = NvmeHost.rw(NvmeHost.OPC_WRITE, 1, 61_000, 32).cid(RAW_CID).sgl(Sqe.SGL_TRANSPORT, 0, 16384);
        q.sendRaw(q.encodeCapsule(write, null));
        Pdu r2t = q.readPdu(WAIT);
        assertThat(r2t.type()).as("PDU type of %s", r2t).isEqualTo(Pdu.R2T);
        assertThat(r2t.u16(8)).as("R2T CCCID").isEqualTo(RAW_CID);
        return r2t;
    }

    @Test
    void h2cDataWithWrongTtag() throws Exception {
        try (NvmeController c = target.controller(1, TcpHostOptions.DEFAULT)) {
            TcpHost q = c.io(0).queue();
            Pdu r2t = startR2tWrite(q);
            int r2tl = (int) r2t.u32(16);
            q.sendRaw(q.encodeH2cData(RAW_CID, (r2t.u16(10) + 1) & 0xFFFF, r2t.u32(12), new byte[r2tl], true));
            assertTerminated(q, TermReq.FES_INVALID_HEADER_FIELD, 10);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"beyond the window", "unexpected offset"})
    void h2cDataOutOfRange(String variant) throws Exception {
        try (NvmeController c = target.controller(1, TcpHostOptions.DEFAULT)) {
            TcpHost q = c.io(0).queue();
            Pdu r2t = startR2tWrite(q);
            int ttag = r2t.u16(10);
            long r2to = r2t.u32(12);
            int r2tl = (int) r2t.u32(16);
            byte[] pdu = variant.equals("beyond the window")
                    ? q.encodeH2cData(RAW_CID, ttag, r2to, new byte[r2tl + 512], true)
                    : q.encodeH2cData(RAW_CID, ttag, r2to + 512, new byte[r2tl - 512], true);
            q.sendRaw(pdu);
            assertTerminated(q, TermReq.FES_DATA_OUT_OF_RANGE, null);
        }
    }
}
