package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

import java.util.Objects;

/** Another discovery service, listed in our discovery log as a referral (subtype 1). */
@JsonIgnoreProperties(ignoreUnknown = false)
public final class ReferralConfig {
    public String transport = "tcp";
    public String address;
    @Range(min = 1, max = 65535)
    public int port = 8009;

    public ReferralConfig() {
    }

    public ReferralConfig(String transport, String address, int port) {
        this.transport = transport;
        setAddress(address);
        this.port = port;
    }

    /**
     * Sets the address in canonical form ({@link IpAddresses}): {@code 0:0:0:0:0:0:0:1} is kept as {@code ::1},
     * so equal addresses compare equal; a non-literal stays as given for the validator to refuse.
     */
    public void setAddress(String address) {
        this.address = IpAddresses.canonicalOrSame(address);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ReferralConfig r && Objects.equals(r.transport, transport)
            && Objects.equals(r.address, address) && r.port == port;
    }

    @Override
    public int hashCode() {
        return Objects.hash(transport, address, port);
    }

    @Override
    public String toString() {
        return transport + ":" + IpAddresses.hostPort(address, port);
    }
}
