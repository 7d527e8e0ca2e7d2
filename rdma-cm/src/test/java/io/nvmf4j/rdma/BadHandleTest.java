package io.nvmf4j.rdma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

/** Null handles, wrong arrays and out-of-range ranges come back as -EINVAL; nothing crashes or throws. */
class BadHandleTest {
    private static final int EINVAL = -Errno.EINVAL;

    @Test
    void cmCallsWithNullHandles() throws Exception {
        assertThat(RdmaCm.eventChannelFd(0)).isEqualTo(EINVAL);
        assertThat(RdmaCm.destroyEventChannel(0)).isEqualTo(EINVAL);
        assertThat(RdmaCm.createId(0, RdmaCm.PS_TCP)).isEqualTo(EINVAL);
        assertThat(RdmaCm.bind(0, InetAddress.getByName("127.0.0.1"), 4420)).isEqualTo(EINVAL);
        assertThat(RdmaCm.bind(0, InetAddress.getByName("::1"), 4420)).isEqualTo(EINVAL);
        assertThat(RdmaCm.resolveAddr(0, InetAddress.getByName("127.0.0.1"), 4420, 100)).isEqualTo(EINVAL);
        assertThat(RdmaCm.resolveRoute(0, 100)).isEqualTo(EINVAL);
        assertThat(RdmaCm.listen(0, 1)).isEqualTo(EINVAL);
        assertThat(RdmaCm.connect(0, new byte[32], 1, 1, 7, 7)).isEqualTo(EINVAL);
        assertThat(RdmaCm.accept(0, new byte[32], 0, 1, 7)).isEqualTo(EINVAL);
        assertThat(RdmaCm.reject(0, new byte[4])).isEqualTo(EINVAL);
        assertThat(RdmaCm.disconnect(0)).isEqualTo(EINVAL);
        assertThat(RdmaCm.destroyId(0)).isEqualTo(EINVAL);
        assertThat(RdmaCm.migrateId(0, 0)).isEqualTo(EINVAL);
        assertThat(RdmaCm.context(0)).isEqualTo(EINVAL);
        assertThat(RdmaCm.qp(0)).isEqualTo(EINVAL);
        assertThat(RdmaCm.address(0, true)).isNull();
        try (CmEvent e = new CmEvent()) {
            assertThat(RdmaCm.getEvent(0, e)).isEqualTo(EINVAL);
        }
        assertThat(RdmaCm.eventName(RdmaCm.EVENT_ESTABLISHED)).isEqualTo("RDMA_CM_EVENT_ESTABLISHED");
    }

    @Test
    void verbsCallsWithNullHandles() {
        assertThat(Verbs.allocPd(0)).isEqualTo(EINVAL);
        assertThat(Verbs.deallocPd(0)).isEqualTo(EINVAL);
        assertThat(Verbs.regMr(0, 0x1000, 4096, Verbs.ACCESS_LOCAL_WRITE)).isEqualTo(EINVAL);
        assertThat(Verbs.deregMr(0)).isEqualTo(EINVAL);
        assertThat(Verbs.createCompChannel(0)).isEqualTo(EINVAL);
        assertThat(Verbs.destroyCompChannel(0)).isEqualTo(EINVAL);
        assertThat(Verbs.compChannelFd(0)).isEqualTo(EINVAL);
        assertThat(Verbs.createCq(0, 16, 0, 0)).isEqualTo(EINVAL);
        assertThat(Verbs.destroyCq(0)).isEqualTo(EINVAL);
        assertThat(Verbs.reqNotifyCq(0, false)).isEqualTo(EINVAL);
        assertThat(Verbs.getCqEvent(0)).isEqualTo(EINVAL);
        assertThat(Verbs.ackCqEvents(0, 1)).isEqualTo(EINVAL);
        assertThat(Verbs.createSrq(0, 16, 1, 0)).isEqualTo(EINVAL);
        assertThat(Verbs.destroySrq(0)).isEqualTo(EINVAL);
        assertThat(Verbs.createQp(0, 0, 0, 0, 0, 16, 16, 1, 1, 0, false, new QpCaps())).isEqualTo(EINVAL);
        assertThat(Verbs.destroyQp(0)).isEqualTo(EINVAL);
        assertThat(Verbs.qpNum(0)).isEqualTo(EINVAL);
        assertThat(Verbs.qpToError(0)).isEqualTo(EINVAL);
        assertThat(Verbs.wcStatusName(Verbs.WC_WR_FLUSH_ERR)).isEqualTo("Work Request Flushed Error");
        assertThat(Rdma.deviceName(0)).isNull();
    }

    @Test
    void dataPathWithNullHandlesWrongArraysAndBadRanges() {
        try (SendWorkRequests s = new SendWorkRequests(4, 1); RecvWorkRequests r = new RecvWorkRequests(4, 1);
                Completions c = new Completions(4)) {
            assertThat(Verbs.postSend(0, s, 0, 1)).isEqualTo(EINVAL);
            assertThat(Verbs.postRecv(0, r, 0, 1)).isEqualTo(EINVAL);
            assertThat(Verbs.postSrqRecv(0, r, 0, 1)).isEqualTo(EINVAL);
            assertThat(Verbs.pollCq(0, c, 4)).isEqualTo(EINVAL);
            // a non-null but never-dereferenced handle: the array checks come first
            long bogus = 0x1000;
            assertThat(Native.postSend(bogus, r.address(), 0, 1)).as("recv array as send").isEqualTo(EINVAL);
            assertThat(Native.postSrqRecv(bogus, s.address(), 0, 1)).as("send array as recv").isEqualTo(EINVAL);
            assertThat(Native.pollCq(bogus, s.address(), 1)).as("send array as completions").isEqualTo(EINVAL);
            assertThat(Verbs.postSend(bogus, s, 3, 2)).as("past the end").isEqualTo(EINVAL);
            assertThat(Verbs.postSend(bogus, s, -1, 1)).as("negative first").isEqualTo(EINVAL);
            assertThat(Verbs.postRecv(bogus, r, 0, 5)).as("more than capacity").isEqualTo(EINVAL);
            assertThat(Verbs.pollCq(bogus, c, 5)).as("more than capacity").isEqualTo(EINVAL);
            assertThat(Verbs.postSend(bogus, s, 2, 0)).as("empty range").isZero();
            assertThat(Native.getCmEvent(bogus, c.address(), 0)).as("completions as event").isEqualTo(EINVAL);
            assertThat(Native.postSend(bogus, 0, 0, 1)).isEqualTo(EINVAL);
            assertThat(Native.freeArray(0)).isEqualTo(EINVAL);
        }
    }

    @Test
    void fdHelpers() {
        assertThat(Rdma.pollIn(1_000_000, 0)).as("fd never opened").isEqualTo(-Errno.EBADF);
        assertThat(Rdma.pollIn(-1, 0)).as("negative fd is ignored by poll(2)").isZero();
        assertThat(Rdma.setNonBlocking(1_000_000, true)).isEqualTo(-Errno.EBADF);
    }

    /** Without a device the CM and verbs entry points fail with an errno, not a crash. */
    @Test
    void withoutADeviceCreationFailsWithErrno() {
        assumeFalse(Rdma.isAvailable());
        long ch = RdmaCm.createEventChannel(true);
        if (ch > 0) {
            RdmaCm.destroyEventChannel(ch);
        } else {
            assertThat(ch).isNegative();
        }
        assertThat(Rdma.deviceContexts()).isEmpty();
    }
}
