package io.nvmf4j.rdma;

/** {@code struct ibv_port_attr} of one port. */
public final class PortAttributes {
    private static final long ACTIVE = Layout.value("port.state.ACTIVE");
    private static final long ETHERNET = Layout.value("port.link_layer.ETHERNET");

    private final int port;
    private final long[] values;

    PortAttributes(int port, long[] values) {
        this.port = port;
        this.values = values.clone();
    }

    private long get(String field) {
        return values[Layout.intValue("port." + field)];
    }

    public int port() {
        return port;
    }

    /** {@code enum ibv_port_state}. */
    public int state() {
        return (int) get("state");
    }

    public boolean isActive() {
        return state() == ACTIVE;
    }

    /** Active MTU in bytes (256 to 4096). */
    public int activeMtuBytes() {
        return 128 << (int) get("active_mtu");
    }

    public int maxMtuBytes() {
        return 128 << (int) get("max_mtu");
    }

    public int gidTableLength() {
        return (int) get("gid_tbl_len");
    }

    public long maxMessageSize() {
        return get("max_msg_sz");
    }

    public int lid() {
        return (int) get("lid");
    }

    public int activeSpeed() {
        return (int) get("active_speed");
    }

    public int activeWidth() {
        return (int) get("active_width");
    }

    /** RoCE / iWARP ports report Ethernet, InfiniBand ports InfiniBand. */
    public boolean isEthernet() {
        return get("link_layer") == ETHERNET;
    }

    @Override
    public String toString() {
        return "port " + port + (isActive() ? " ACTIVE" : " state=" + state()) + " mtu=" + activeMtuBytes()
                + (isEthernet() ? " ethernet" : " infiniband") + " gids=" + gidTableLength();
    }
}
