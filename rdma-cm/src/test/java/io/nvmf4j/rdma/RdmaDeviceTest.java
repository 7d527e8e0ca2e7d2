package io.nvmf4j.rdma;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetAddress;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The device checks of {@link SelfTest} under JUnit: each check throws an {@link AssertionError} naming
 * what differed (SelfTest.check), asserted here as "completes without throwing". They need an RDMA device (soft-RoCE in the
 * e2e guest) and skip elsewhere with the unavailability cause. The address is
 * {@code -Dnvmf4j.rdma.address} or the first IPv4 address of a netdev with an RDMA device.
 */
class RdmaDeviceTest {
    private static InetAddress address;
    private static int port;

    @BeforeAll
    static void findAddress() throws Exception {
        if (!Rdma.isAvailable()) {
            return;
        }
        String configured = System.getProperty("nvmf4j.rdma.address");
        address = configured != null ? InetAddress.getByName(configured) : SelfTest.defaultAddress();
        port = 30_000 + (int) (ProcessHandle.current().pid() % 10_000);
    }

    /** Skips each test (so the report lists them) with the cause, e.g. "no RDMA device: ...". */
    @BeforeEach
    void needsADevice() {
        assumeTrue(Rdma.isAvailable(), Rdma::unavailabilityCause);
    }

    @Test
    void deviceAttributes() {
        assertThatCode(() -> SelfTest.checkDeviceAttributes()).doesNotThrowAnyException();
    }

    @Test
    void connectAcceptDisconnect() throws Exception {
        assertThatCode(() -> SelfTest.checkConnectAcceptDisconnect(address, port)).doesNotThrowAnyException();
    }

    @Test
    void rejectWithPrivateData() throws Exception {
        assertThatCode(() -> SelfTest.checkReject(address, port + 1)).doesNotThrowAnyException();
    }

    @Test
    void registerPostPollSendRecv() throws Exception {
        assertThatCode(() -> SelfTest.checkSendRecv(address, port + 2)).doesNotThrowAnyException();
    }

    @Test
    void rdmaReadAndWriteChainedWithSend() throws Exception {
        assertThatCode(() -> SelfTest.checkRdmaReadWrite(address, port + 3)).doesNotThrowAnyException();
    }

    @Test
    void completionChannelWakesAnArmedCq() throws Exception {
        assertThatCode(() -> SelfTest.checkInterrupt(address, port + 4)).doesNotThrowAnyException();
    }

    @Test
    void errorStateFlushesPostedWork() throws Exception {
        assertThatCode(() -> SelfTest.checkFlush(address, port + 5)).doesNotThrowAnyException();
    }
}
