package io.nvmf4j.testhost;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class FreePortsTest {
    @Test
    void portsLieBelowTheEphemeralRangeAreBindableAndNeverRepeat() throws Exception {
        int low = FreePorts.ephemeralLow();
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 300; i++) {
            int port = FreePorts.pick();
            assertThat(port).as("below the ephemeral range").isBetween(10_000, low - 1);
            assertThat(seen.add(port)).as("port %d handed out twice", port).isTrue();
        }
        int port = FreePorts.pick();
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(port));
            assertThat(s.getLocalPort()).isEqualTo(port);
        }
    }

    @Test
    void aPortBoundByAnotherSocketIsNotHandedOut() throws Exception {
        try (ServerSocket held = new ServerSocket()) {
            held.bind(new InetSocketAddress(FreePorts.pick()));
            for (int i = 0; i < 300; i++) {
                assertThat(FreePorts.pick()).isNotEqualTo(held.getLocalPort());
            }
        }
    }
}
