package io.nvmf4j.it;

import io.nvmf4j.bdev.DiscardLimits;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Deallocate as Linux hosts send it (a whole 4 KiB page of ranges), the limits and features advertised from
 * the devices (Identify CNS 06h DMRL/DMRSL/DMSL, ONCS, DLFEAT) and enforced before any work, and Write Zeroes
 * with DEAC.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DiscardTest {
    private static final int DEAC = 1 << 25;
    private static final int ONCS = 520;
    private static final int DLFEAT = 33;

    private static Completion dsm(NvmeHost io, int payloadBytes, NvmeHost.Range... ranges) {
        return io.await(io.deallocateAsync(1, payloadBytes, ranges));
    }

    private static NvmeHost.Range r(long slba, int nlb) {
        return new NvmeHost.Range(slba, nlb);
    }

    @Test
    void deallocateWithAWholePageOfRangesAsLinuxSendsIt() throws Exception {
        try (TestTarget t = TestTarget.start(); NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            byte[] data = Le.random(8 * 512, 11);
            assertThat(io.write(1, 100, data).ok()).isTrue();
            // one range (NR 0) in a 4096-byte payload; the bytes after it are not ranges and must not be read
            byte[] payload = new byte[4096];
            java.util.Arrays.fill(payload, 16, 4096, (byte) 0xFF);
            Le.putU32(payload, 4, 2);
            Le.putU32(payload, 8, 102);
            Completion d = io.executeWrite(Sqe.of(NvmeHost.OPC_DSM).nsid(1).cdw(10, 0).cdw(11, 1 << 2), payload);
            assertThat(d.ok()).as("DSM NR 0 with 4096 bytes: %s", d).isTrue();
            byte[] back = io.read(1, 100, 8).data();
            for (int i = 0; i < 8 * 512; i++) {
                boolean freed = i >= 2 * 512 && i < 4 * 512;
                assertThat(back[i]).as("byte %d", i).isEqualTo(freed ? 0 : data[i]);
            }
            Completion three = dsm(io, 4096, r(0, 1), r(10, 1), r(20, 1));
            assertThat(three.ok()).as("%s", three).isTrue();
        }
    }

    @Test
    void deallocateWithLessDataThanItsRangesIsDataSglLengthInvalid() throws Exception {
        try (TestTarget t = TestTarget.start(); NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            assertStatus(dsm(c.io(0), 16, r(0, 1), r(8, 1)), 0, 0x0F, true); // NR 1 needs 32 bytes
        }
    }

    @Test
    void limitsAreAdvertisedAndEnforcedBeforeAnyWork() throws Exception {
        RecordingBdev dev = new RecordingBdev("rec", 512, 1 << 20);
        dev.limits(new DiscardLimits(true, true, true, true, 4, 8, 16));
        try (DeviceTarget t = DeviceTarget.start(dev); NvmeController c = t.controller(1)) {
            byte[] nvm = c.admin().identify(0x06, 0, 0).data();
            assertThat(Le.u8(nvm, 3)).as("DMRL").isEqualTo(4);
            assertThat(Le.u32(nvm, 4)).as("DMRSL").isEqualTo(8);
            assertThat(Le.u64(nvm, 8)).as("DMSL").isEqualTo(16);
            NvmeHost io = c.io(0);
            assertStatus(dsm(io, 4096, r(0, 1), r(8, 1), r(16, 1), r(24, 1), r(32, 1)), 0, 0x02, true); // > DMRL
            assertStatus(dsm(io, 4096, r(0, 9)), 0, 0x02, true); // > DMRSL
            assertStatus(dsm(io, 4096, r(0, 8), r(100, 8), r(200, 1)), 0, 0x02, true); // > DMSL
            assertThat(dev.calls("deallocate")).as("nothing deallocated by a refused command").isEmpty();
            Completion ok = dsm(io, 4096, r(0, 8), r(100, 4), r(200, 2), r(300, 2));
            assertThat(ok.ok()).as("%s", ok).isTrue();
            assertThat(dev.calls("deallocate")).extracting(RecordingBdev.Call::offset)
                .containsExactly(0L, 100L * 512, 200L * 512, 300L * 512);
        }
    }

    /**
     * Controller-wide limits from namespaces of different block sizes: the tightest, taken in bytes and given
     * in blocks of the largest block size, so neither namespace is asked for more than its device takes.
     */
    @Test
    void limitsAcrossNamespacesAreTheTightestInBytes() throws Exception {
        RecordingBdev small = new RecordingBdev("small", 512, 1 << 20);
        small.limits(new DiscardLimits(true, true, true, false, 16, 8192, 65536)); // 4 MiB per range, 32 MiB total
        RecordingBdev large = new RecordingBdev("large", 4096, 1 << 17);
        large.limits(new DiscardLimits(true, true, true, false, 64, 512, 0)); // 2 MiB per range
        RecordingBdev none = new RecordingBdev("none", 512, 4096);
        none.limits(new DiscardLimits(false, false, false, false, 1, 1, 1)); // cannot deallocate: not counted
        try (DeviceTarget t = DeviceTarget.start(small, large, none); NvmeController c = t.controller(1)) {
            byte[] nvm = c.admin().identify(0x06, 0, 0).data();
            assertThat(Le.u8(nvm, 3)).as("DMRL").isEqualTo(16);
            assertThat(Le.u32(nvm, 4)).as("DMRSL: 2 MiB in 4 KiB blocks").isEqualTo(512);
            assertThat(Le.u64(nvm, 8)).as("DMSL: 32 MiB in 4 KiB blocks").isEqualTo(8192);
        }
    }

    @Test
    void writeZeroesWithDeacDeallocatesWhereReadsReturnZeros() throws Exception {
        RecordingBdev dev = new RecordingBdev("rec", 512, 4096);
        dev.limits(new DiscardLimits(true, true, true, true, 256, 0, 0));
        try (DeviceTarget t = DeviceTarget.start(dev); NvmeController c = t.controller(1)) {
            byte[] ns = c.admin().identify(0x00, 1, 0).data();
            assertThat(Le.u8(ns, DLFEAT)).as("DLFEAT: reads zeros, Write Zeroes DEAC").isEqualTo(0x9);
            NvmeHost io = c.io(0);
            assertThat(io.execute(NvmeHost.rw(NvmeHost.OPC_WRITE_ZEROES, 1, 64, 8).cdw(12, 7 | DEAC)).ok()).isTrue();
            assertThat(io.execute(NvmeHost.rw(NvmeHost.OPC_WRITE_ZEROES, 1, 128, 8)).ok()).isTrue();
            assertThat(dev.calls("deallocate")).containsExactly(new RecordingBdev.Call("deallocate", 64 * 512, 4096, false));
            assertThat(dev.calls("writeZeroes")).containsExactly(new RecordingBdev.Call("writeZeroes", 128 * 512, 4096, false));
        }
    }

    @Test
    void aDeviceThatCannotDeallocateIsNotAdvertisedAsOne() throws Exception {
        RecordingBdev dev = new RecordingBdev("rec", 512, 4096);
        dev.limits(new DiscardLimits(false, false, false, false, 256, 0, 0));
        try (DeviceTarget t = DeviceTarget.start(dev); NvmeController c = t.controller(1)) {
            byte[] id = c.admin().identify(0x01, 0, 0).data();
            assertThat(Le.u16(id, ONCS) & 0x4).as("ONCS Dataset Management").isEqualTo(0);
            assertThat(Le.u16(id, ONCS) & 0x8).as("ONCS Write Zeroes").isEqualTo(0x8);
            assertThat(Le.u8(c.admin().identify(0x00, 1, 0).data(), DLFEAT)).as("DLFEAT").isEqualTo(0);
            NvmeHost io = c.io(0);
            assertThat(io.execute(NvmeHost.rw(NvmeHost.OPC_WRITE_ZEROES, 1, 0, 8).cdw(12, 7 | DEAC)).ok()).isTrue();
            assertThat(dev.calls("writeZeroes")).as("DEAC ignored: zeros written").hasSize(1);
            assertThat(dev.calls("deallocate")).isEmpty();
        }
    }

    @Test
    void ramNamespacesAdvertiseDeallocateReadingZerosWithoutLimits() throws Exception {
        try (TestTarget t = TestTarget.start(); NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            assertThat(Le.u16(c.admin().identify(0x01, 0, 0).data(), ONCS) & 0xC).isEqualTo(0xC);
            assertThat(Le.u8(c.admin().identify(0x00, 1, 0).data(), DLFEAT)).isEqualTo(0x1);
            byte[] nvm = c.admin().identify(0x06, 0, 0).data();
            assertThat(Le.u8(nvm, 3) | Le.u32(nvm, 4) | Le.u64(nvm, 8)).as("no DSM limits").isZero();
        }
    }
}
