package io.nvmf4j.rdma;

/** {@code struct ibv_port_attr} of one port. */
public final class PortAttributes {
    private static final long ACTIVE = Layout.value("port.state.ACTIVE");
    private static final long ETHERNET = Layout.value("port.link_layer.ETHERNET");

    // indices into the attribute array, resolved once: the getters are plain array reads (no lookup,
    // no allocation; supportsSendWithInvalidate is asked per response)
    private static final int I_STATE = Layout.intValue("port.state");
    private static final int I_ACTIVE_MTU = Layout.intValue("port.active_mtu");
    private static final int I_MAX_MTU = Layout.intValue("port.max_mtu");
    private static final int I_GID_TBL_LEN = Layout.intValue("port.gid_tbl_len");
    private static final int I_MAX_MSG_SZ = Layout.intValue("port.max_msg_sz");
    private static final int I_LID = Layout.intValue("port.lid");
    private static final int I_ACTIVE_SPEED = Layout.intValue("port.active_speed");
    private static final int I_ACTIVE_WIDTH = Layout.intValue("port.active_width");
    private static final int I_LINK_LAYER = Layout.intValue("port.link_layer");

    private final int port;
    private final long[] values;

    PortAttributes(int port, long[] values) {
        this.port = port;
        this.values = values.clone();
    }

    public int port() {
        return port;
    }

    /** {@code enum ibv_port_state}. */
    public int state() {
        return (int) values[I_STATE];
    }

    public boolean isActive() {
        return state() == ACTIVE;
    }

    /** Active MTU in bytes (256 to 4096). */
    public int activeMtuBytes() {
        return 128 << (int) values[I_ACTIVE_MTU];
    }

    public int maxMtuBytes() {
        return 128 << (int) values[I_MAX_MTU];
    }

    public int gidTableLength() {
        return (int) values[I_GID_TBL_LEN];
    }

    public long maxMessageSize() {
        return values[I_MAX_MSG_SZ];
    }

    public int lid() {
        return (int) values[I_LID];
    }

    public int activeSpeed() {
        return (int) values[I_ACTIVE_SPEED];
    }

    public int activeWidth() {
        return (int) values[I_ACTIVE_WIDTH];
    }

    /** RoCE / iWARP ports report Ethernet, InfiniBand ports InfiniBand. */
    public boolean isEthernet() {
        return values[I_LINK_LAYER] == ETHERNET;
    }

    @Override
    public String toString() {
        return "port " + port + (isActive() ? " ACTIVE" : " state=" + state()) + " mtu=" + activeMtuBytes()
                + (isEthernet() ? " ethernet" : " infiniband") + " gids=" + gidTableLength();
    }
}
