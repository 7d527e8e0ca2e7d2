package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Option;

/** A transport address on the command line, spelled as nvme-cli does: -t, -a, -s. */
final class Address {
    @Option(names = {"-t", "--transport"}, paramLabel = "TRANSPORT", defaultValue = "tcp",
        description = "tcp or rdma (default: ${DEFAULT-VALUE}).")
    String transport;

    @Option(names = {"-a", "--address"}, required = true, paramLabel = "ADDR", description = "IPv4 or IPv6 literal.")
    String address;

    ObjectNode body(ObjectNode node, int port) {
        return node.put("transport", transport).put("address", address).put("port", port);
    }

    /** ".../{transport}/{address}/{port}" for DELETE. */
    String path(String base, int port) {
        return base + "/" + ApiClient.seg(transport) + "/" + ApiClient.seg(address) + "/" + port;
    }

    @Override
    public String toString() {
        return transport + ":" + address;
    }
}
