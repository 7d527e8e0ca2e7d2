package io.nvmf4j.it;

import io.nvmf4j.bdev.BlockDevice;
import io.nvmf4j.cmd.CommandDispatcher;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.TcpTransportConfig;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.core.Target;
import io.nvmf4j.runtime.PollGroups;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import io.nvmf4j.transport.tcp.TcpTransport;

import java.io.IOException;

/**
 * A loopback target assembled from the core pieces around block devices the test made (not from a config
 * document): one subsystem {@link #SUBNQN}, open to any host, with the devices as nsid 1, 2, ... on one TCP
 * listener (port 0), one poll group.
 */
final class DeviceTarget implements AutoCloseable {
    static final String SUBNQN = "nqn.2024-01.io.nvmf4j:it-devices";

    final Target target = new Target();
    final Subsystem subsystem;
    private final PollGroups pollGroups = new PollGroups(1, "backoff");
    private final TcpTransport tcp;
    final int port;

    private DeviceTarget(BlockDevice... devices) throws IOException {
        subsystem = new Subsystem(SUBNQN, false, "NVMF4JDEV0001", "nvmf4j-devices", Target.FIRMWARE, 32, 1, 0xFFEF, true);
        for (int i = 0; i < devices.length; i++) {
            byte[] id = new byte[16];
            id[15] = (byte) (i + 1);
            subsystem.addNamespace(new Namespace(i + 1, devices[i], id, id, null));
        }
        ListenerConfig l = new ListenerConfig("tcp", TestTarget.ADDRESS, 0);
        subsystem.listeners().add(l);
        target.addSubsystem(subsystem);
        tcp = new TcpTransport(new CommandDispatcher(target), new TcpTransportConfig(), pollGroups, target.observer());
        port = tcp.listen(l).getPort();
    }

    static DeviceTarget start(BlockDevice... devices) throws IOException {
        return new DeviceTarget(devices);
    }

    NvmeController controller(int ioQueues) throws IOException {
        return NvmeController.open(TestTarget.ADDRESS, port, SUBNQN, TestTarget.HOSTNQN, TestTarget.KATO_MS, ioQueues,
            TcpHostOptions.DEFAULT);
    }

    @Override
    public void close() {
        tcp.close();
        for (Controller c : target.allControllers()) {
            c.destroy("test over");
        }
        pollGroups.close();
        for (Namespace ns : subsystem.namespaces()) {
            ns.bdev().close();
        }
    }
}
