package io.nvmf4j.rdma;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;

import org.junit.jupiter.api.Test;

/**
 * Attribute getters read the array at the indices the library exported. The transport asks
 * {@link DeviceAttributes#supportsSendWithInvalidate()} for every response it sends, so a getter must
 * not allocate (it once built its layout key by string concatenation per call: ~70 bytes per I/O).
 * Needs only the library (loads on a host without a device).
 */
class DeviceAttributesTest {

    private static long[] attributes() {
        long[] v = new long[Layout.intValue("device.count")];
        v[Layout.intValue("device.max_qp_wr")] = 16384;
        v[Layout.intValue("device.max_srq_wr")] = 8192;
        v[Layout.intValue("device.max_qp_init_rd_atom")] = 128;
        v[Layout.intValue("device.max_mr_size")] = -1L;
        v[Layout.intValue("device.device_cap_flags")] = Layout.value("device.cap.MEM_MGT_EXTENSIONS")
            | Layout.value("device.cap.SRQ_RESIZE");
        return v;
    }

    @Test
    void gettersReadTheExportedIndices() {
        DeviceAttributes a = new DeviceAttributes(attributes());
        assertThat(a.maxQpWr()).isEqualTo(16384);
        assertThat(a.maxSrqWr()).isEqualTo(8192);
        assertThat(a.maxQpInitRdAtom()).isEqualTo(128);
        assertThat(a.maxMrSize()).isEqualTo(-1L);
        assertThat(a.supportsSendWithInvalidate()).isTrue();
        assertThat(a.supportsSrqResize()).isTrue();
        assertThat(a.supportsMemoryWindows()).isFalse();
        assertThat(new DeviceAttributes(new long[attributes().length]).supportsSendWithInvalidate()).isFalse();
    }

    @Test
    void capabilityQueriesDoNotAllocate() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        DeviceAttributes a = new DeviceAttributes(attributes());
        int yes = 0;
        for (int i = 0; i < 20_000; i++) { // warm up (and let the JIT compile the getters)
            yes += a.supportsSendWithInvalidate() ? 1 : 0;
        }
        long tid = Thread.currentThread().getId();
        long before = mx.getThreadAllocatedBytes(tid);
        for (int i = 0; i < 100_000; i++) {
            yes += a.supportsSendWithInvalidate() ? 1 : 0;
            yes += a.maxQpWr() > 0 ? 1 : 0;
        }
        long allocated = mx.getThreadAllocatedBytes(tid) - before;
        assertThat(yes).isEqualTo(220_000);
        // the measurement itself may cost a few bytes; one key string per call would be megabytes
        assertThat(allocated).as("bytes allocated by 200000 attribute reads").isLessThan(1024);
    }
}
