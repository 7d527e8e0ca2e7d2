package io.nvmf4j.it;

import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the command layer promises about durability, checked on a {@link RecordingBdev}: FUA reaches the
 * device, the write cache feature is the device's state, a sticky write-back error fails later writes and
 * flushes and shows in the SMART log, and a shutdown (CC.SHN) flushes before it reports complete.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DurabilityTest {
    private static final int FUA = 1 << 30;
    private static final int VWC = 525;

    private static Sqe write(long slba, int nlb, int cdw12Flags) {
        Sqe s = NvmeHost.rw(NvmeHost.OPC_WRITE, 1, slba, nlb);
        return s.cdw(12, ((nlb - 1) & 0xFFFF) | cdw12Flags);
    }

    @Test
    void fuaWriteReachesTheDeviceWithFua() throws Exception {
        RecordingBdev dev = new RecordingBdev("rec", 512, 4096);
        try (DeviceTarget t = DeviceTarget.start(dev); NvmeController c = t.controller(1)) {
            NvmeHost io = c.io(0);
            assertThat(io.executeWrite(write(8, 1, FUA), Le.random(512, 1)).ok()).isTrue();
            assertThat(io.executeWrite(write(9, 1, 0), Le.random(512, 2)).ok()).isTrue();
            Completion wz = io.execute(NvmeHost.rw(NvmeHost.OPC_WRITE_ZEROES, 1, 16, 4).cdw(12, 3 | FUA));
            assertThat(wz.ok()).as("%s", wz).isTrue();
            List<RecordingBdev.Call> writes = dev.calls("write");
            assertThat(writes).containsExactly(new RecordingBdev.Call("write", 8 * 512, 512, true),
                new RecordingBdev.Call("write", 9 * 512, 512, false));
            assertThat(dev.calls("writeZeroes")).containsExactly(new RecordingBdev.Call("writeZeroes", 16 * 512, 2048, true));
            assertThat(dev.stableBlock(8)).as("the FUA write is on stable media at its completion").isNotNull();
            assertThat(dev.stableBlock(9)).as("the plain write waits in the cache").isNull();
        }
    }

    @Test
    void writeCacheFeatureIsTheDevicesState() throws Exception {
        RecordingBdev dev = new RecordingBdev("rec", 512, 4096);
        try (DeviceTarget t = DeviceTarget.start(dev); NvmeController a = t.controller(1);
             NvmeController b = t.controller(1)) {
            byte[] id = a.admin().identify(0x01, 0, 0).data();
            assertThat(Le.u8(id, VWC) & 1).as("VWC present: the device has a volatile cache").isEqualTo(1);
            assertThat(a.admin().getFeatures(0x06, 0).dw0() & 1).as("WCE").isEqualTo(1);
            assertThat(a.admin().setFeatures(0x06, 0).ok()).isTrue();
            assertThat(dev.writeCacheEnabled()).as("Set Features 06h reached the device").isFalse();
            assertThat(b.admin().getFeatures(0x06, 0).dw0() & 1).as("WCE seen from another controller").isEqualTo(0);
            assertThat(b.io(0).write(1, 5, Le.random(512, 3)).ok()).isTrue();
            assertThat(dev.stableBlock(5)).as("with the cache off a write is durable at completion").isNotNull();
            assertThat(b.admin().setFeatures(0x06, 1).ok()).isTrue();
            assertThat(dev.writeCacheEnabled()).isTrue();
        }
    }

    @Test
    void ramNamespacesReportNoVolatileWriteCache() throws Exception {
        try (TestTarget t = TestTarget.start(); NvmeController c = t.controller(1, TcpHostOptions.DEFAULT)) {
            byte[] id = c.admin().identify(0x01, 0, 0).data();
            assertThat(Le.u8(id, VWC)).as("VWC: no volatile cache behind malloc namespaces").isEqualTo(0);
            assertStatus(c.admin().getFeatures(0x06, 0), 0, 0x02, true);
            assertStatus(c.admin().setFeatures(0x06, 0), 0, 0x02, true);
            assertStatus(c.admin().execute(Sqe.of(NvmeHost.OPC_GET_FEATURES).cdw(10, 0x06 | (3 << 8))), 0, 0x02, true);
        }
    }

    @Test
    void stickyDurabilityErrorFailsWritesAndFlushesAndShowsInSmart() throws Exception {
        RecordingBdev dev = new RecordingBdev("rec", 512, 4096);
        try (DeviceTarget t = DeviceTarget.start(dev); NvmeController c = t.controller(1)) {
            NvmeHost io = c.io(0);
            assertThat(io.write(1, 0, Le.random(512, 4)).ok()).isTrue();
            dev.failDurability(NvmeStatus.WRITE_FAULT, 3);
            assertStatus(io.write(1, 1, Le.random(512, 5)), 2, 0x80, false);
            assertStatus(io.flush(1), 2, 0x80, false);
            assertStatus(io.execute(NvmeHost.rw(NvmeHost.OPC_WRITE_ZEROES, 1, 0, 1)), 2, 0x80, false);
            assertThat(io.read(1, 0, 1).ok()).as("reads still work").isTrue();
            assertThat(dev.calls("write")).as("failed writes never reached the device").hasSize(1);
            byte[] smart = c.admin().getLogPage(0x02, 0xFFFFFFFF, 0, 512).data();
            assertThat(Le.u64(smart, 160)).as("media and data integrity errors").isEqualTo(3);
            assertThat(Le.u8(smart, 0) & 0x4).as("critical warning: reliability degraded").isEqualTo(0x4);
        }
    }

    @Test
    void shutdownFlushesTheDeviceCacheBeforeReportingComplete() throws Exception {
        RecordingBdev dev = new RecordingBdev("rec", 512, 4096);
        // the device's flush is in progress until the test lets it go: the Property Get after CC.SHN finds the
        // shutdown processing however late it comes
        CountDownLatch flushing = dev.holdFlushes();
        try (DeviceTarget t = DeviceTarget.start(dev); NvmeController c = t.controller(1)) {
            byte[] data = Le.random(512, 6);
            assertThat(c.io(0).write(1, 42, data).ok()).isTrue();
            assertThat(dev.cachedBlock(42)).as("the write sits in the device cache").isEqualTo(data);
            int cc = c.admin().propertyGet(NvmeHost.PROP_CC, false).dw0();
            assertThat(c.admin().propertySet(NvmeHost.PROP_CC, (cc & ~0xC000) | (1 << 14), false).ok()).isTrue();
            int first = (c.admin().propertyGet(NvmeHost.PROP_CSTS, false).dw0() >>> 2) & 3;
            assertThat(dev.stableBlock(42)).as("nothing on stable media while the flush is held").isNull();
            flushing.countDown();
            int shst = first;
            for (long end = System.nanoTime() + 5_000_000_000L; System.nanoTime() < end && shst != 2; Thread.sleep(5)) {
                shst = (c.admin().propertyGet(NvmeHost.PROP_CSTS, false).dw0() >>> 2) & 3;
            }
            assertThat(first).as("CSTS.SHST right after CC.SHN: processing while the device flushes").isEqualTo(1);
            assertThat(shst).as("CSTS.SHST").isEqualTo(2);
            assertThat(dev.stableBlock(42)).as("the cached write is on stable media once SHST is complete")
                .isEqualTo(data);
            assertThat(dev.calls("flushed")).hasSize(1);
        }
    }
}
