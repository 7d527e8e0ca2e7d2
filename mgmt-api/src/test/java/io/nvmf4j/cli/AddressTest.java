package io.nvmf4j.cli;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Addresses as nvmfctl writes them: IPv6 in brackets, in its short form. */
class AddressTest {
    @Test
    void hostPortBracketsIpv6Only() {
        assertThat(Address.hostPort("127.0.0.1", 4420)).isEqualTo("127.0.0.1:4420");
        assertThat(Address.hostPort("::1", 4421)).isEqualTo("[::1]:4421");
        assertThat(Address.hostPort("fe80::1%eth0", 4420)).isEqualTo("[fe80::1%eth0]:4420");
    }

    @Test
    void peerAddressesInJavasFormBecomeAddressPort() {
        assertThat(Address.peer("/127.0.0.1:51268")).isEqualTo("127.0.0.1:51268");
        assertThat(Address.peer("localhost/127.0.0.1:51268")).isEqualTo("127.0.0.1:51268");
        assertThat(Address.peer("/[0:0:0:0:0:0:0:1]:51268")).isEqualTo("[::1]:51268");
        assertThat(Address.peer("/0:0:0:0:0:0:0:1:51268")).isEqualTo("[::1]:51268");
        assertThat(Address.peer("/[2001:db8:0:0:1:0:0:1]:4420")).isEqualTo("[2001:db8::1:0:0:1]:4420");
        assertThat(Address.peer(null)).isNull();
    }

    @Test
    void ipv6ShortForm() {
        assertThat(Address.compress("0:0:0:0:0:0:0:1")).isEqualTo("::1");
        assertThat(Address.compress("0:0:0:0:0:0:0:0")).isEqualTo("::");
        assertThat(Address.compress("2001:db8:0:1:0:0:0:1")).isEqualTo("2001:db8:0:1::1");
        assertThat(Address.compress("2001:0db8:0:0:1:0:0:1")).isEqualTo("2001:db8::1:0:0:1");
        assertThat(Address.compress("fe80:0:0:0:1:2:3:4")).isEqualTo("fe80::1:2:3:4");
        assertThat(Address.compress("2001:db8:1:2:3:4:5:0")).as("one zero group stays").isEqualTo("2001:db8:1:2:3:4:5:0");
        assertThat(Address.compress("127.0.0.1")).isEqualTo("127.0.0.1");
    }
}
