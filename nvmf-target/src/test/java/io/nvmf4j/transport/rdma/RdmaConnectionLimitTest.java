package io.nvmf4j.transport.rdma;

import io.nvmf4j.transport.ConnectionLimits;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The RDMA connection limit (issue 15): {@code rdma.maxConnectionsPerListener} / {@code maxConnectionsPerHost}
 * decide each CONNECT_REQUEST before anything is set up, and one beyond either is refused with a CM reject whose
 * private data says "no resources" (NVMe/RDMA status 6), as SPDK and nvmet reject what they cannot take.
 *
 * <p>Why a unit test of the decision, not a connection: this machine and CI's have no RDMA device, and the
 * QEMU guest's soft-RoCE runs only the Linux host (e2e), which opens a handful of queues per controller, far
 * below any limit worth setting. What RdmaTransport.onConnectRequest does with the answer (reject with that
 * private data; release when the queue pair is destroyed) is the code below these calls: {@link
 * RdmaTransport#admit}, {@link RdmaTransport#hostOf} of the address rdma-cm reports and {@link
 * CmPrivateData#rejectData}. The shared counting itself is ConnectionLimits, as TcpConnectionLimitTest drives
 * it over real sockets.
 */
class RdmaConnectionLimitTest {
    @Test
    void beyondThePerHostOrPerListenerLimitAConnectRequestGetsANoResourcesReject() throws Exception {
        java.util.List<String> refusedBy = new java.util.concurrent.CopyOnWriteArrayList<>();
        ConnectionLimits limits = new ConnectionLimits("rdma 10.0.0.1:4420", 3, 2, refusedBy::add);
        InetAddress a = RdmaTransport.hostOf("10.0.0.7:51234");
        InetAddress b = RdmaTransport.hostOf("10.0.0.8:40000");
        InetAddress c = RdmaTransport.hostOf("[fe80::1]:4420");
        assertThat(RdmaTransport.admit(limits, a)).isZero();
        assertThat(RdmaTransport.admit(limits, RdmaTransport.hostOf("10.0.0.7:51235"))).as("same host, other port")
            .isZero();
        assertThat(RdmaTransport.admit(limits, a)).as("a third queue pair from 10.0.0.7")
            .isEqualTo(CmPrivateData.REJECT_NO_RESOURCES);
        assertThat(RdmaTransport.admit(limits, b)).isZero();
        assertThat(RdmaTransport.admit(limits, c)).as("a fourth on the listener")
            .isEqualTo(CmPrivateData.REJECT_NO_RESOURCES);
        assertThat(limits.refused()).isEqualTo(2);
        assertThat(refusedBy).as("the limit of each refusal, for the metric")
            .containsExactly(ConnectionLimits.PER_HOST, ConnectionLimits.PER_LISTENER);
        limits.release(a);
        assertThat(RdmaTransport.admit(limits, c)).as("once one went away").isZero();
        assertThat(limits.connections()).isEqualTo(3);
        // what the host reads in the reject: RECFMT 0, STS 6
        assertThat(CmPrivateData.rejectData(RdmaTransport.admit(limits, b))).containsExactly(0, 0, 6, 0);
        assertThat(CmPrivateData.describeReject(CmPrivateData.REJECT_NO_RESOURCES)).isEqualTo("no resources");
        assertThat(RdmaTransport.admit(null, a)).as("a listener being removed counts nothing").isZero();
    }

    @Test
    void thePeerAddressIsParsedAsALiteralOnly() throws Exception {
        assertThat(RdmaTransport.hostOf("10.0.0.7:4420")).isEqualTo(InetAddress.getByName("10.0.0.7"));
        assertThat(RdmaTransport.hostOf("[fe80::1]:4420")).isEqualTo(InetAddress.getByName("fe80::1"));
        InetAddress unknown = InetAddress.getByAddress(new byte[4]);
        for (String odd : new String[] {"unbound", null, "", "999.0.0.1:1", "[not-an-address]:1", "example.org:4420"}) {
            assertThat(RdmaTransport.hostOf(odd)).as("%s", odd).isEqualTo(unknown);
        }
    }
}
