package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.Map;
import java.util.Objects;

/** A transport address a subsystem is reachable on (the discovery subsystem listens on every one). */
@JsonIgnoreProperties(ignoreUnknown = false)
public final class ListenerConfig {
    /** {@code tcp} or {@code rdma}. */
    public String transport = "tcp";
    /** IPv4 or IPv6 literal. */
    public String address;
    @Range(min = 0, max = 65535, note = "0: any free port")
    public int port = 4420;
    /**
     * NVMe/TCP secure channel (TLS 1.3 with a PSK, the hosts' {@code hostKeys[].tlsKey}): {@code none} (plain only,
     * the default), {@code optional} (TLS or plain, told apart by the first byte) or {@code required} (plain
     * connections are closed). TCP only; not part of the listener's identity ({@link #equals}).
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public String secureChannel;
    /**
     * ANA states of this subsystem's namespace groups through this listener: group id (as a string, {@code "2"}) to
     * {@code optimized}, {@code non-optimized}, {@code inaccessible}, {@code persistent-loss} or {@code change};
     * absent groups are optimized. Not part of the listener's identity ({@link #equals}).
     */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public Map<String, String> anaStates;

    public ListenerConfig() {
    }

    public ListenerConfig(String transport, String address, int port) {
        this.transport = transport;
        setAddress(address);
        this.port = port;
    }

    /** {@link #secureChannel} with its default: {@code none}, {@code optional} or {@code required}. */
    public String secureChannelOrDefault() {
        return secureChannel == null ? SECURE_NONE : secureChannel;
    }

    public static final String SECURE_NONE = "none";
    public static final String SECURE_OPTIONAL = "optional";
    public static final String SECURE_REQUIRED = "required";

    public String key() {
        return transport + ":" + IpAddresses.hostPort(address, port);
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
        return o instanceof ListenerConfig l && l.transport.equals(transport) && l.address.equals(address) && l.port == port;
    }

    @Override
    public int hashCode() {
        return Objects.hash(transport, address, port);
    }

    @Override
    public String toString() {
        return key();
    }
}
