package io.nvmf4j.rdma;

import java.nio.ByteBuffer;

/**
 * One preallocated CM event that {@link RdmaCm#getEvent} fills in place: type, status, the CM
 * id it concerns (a new id for CONNECT_REQUEST), the listener id, the connection parameters and
 * a copy of the private data. The underlying librdmacm event must be released with
 * {@link #ack()}; {@link RdmaCm#destroyId} blocks until every event of that id is acked.
 *
 * <p>On a CONNECT_REQUEST the connection parameters are as the passive side sees them: the
 * host's {@code responder_resources} arrive as {@link #initiatorDepth()}.
 */
public final class CmEvent extends NativeArray {
    private static final int EVENT = Layout.intValue("cm_event.event");
    private static final int ID = Layout.intValue("cm_event.id");
    private static final int LISTEN_ID = Layout.intValue("cm_event.listen_id");
    private static final int TYPE = Layout.intValue("cm_event.type");
    private static final int STATUS = Layout.intValue("cm_event.status");
    private static final int QP_NUM = Layout.intValue("cm_event.qp_num");
    private static final int RESPONDER_RESOURCES = Layout.intValue("cm_event.responder_resources");
    private static final int INITIATOR_DEPTH = Layout.intValue("cm_event.initiator_depth");
    private static final int FLOW_CONTROL = Layout.intValue("cm_event.flow_control");
    private static final int RETRY_COUNT = Layout.intValue("cm_event.retry_count");
    private static final int RNR_RETRY_COUNT = Layout.intValue("cm_event.rnr_retry_count");
    private static final int SRQ = Layout.intValue("cm_event.srq");
    private static final int PRIVATE_DATA_LEN = Layout.intValue("cm_event.private_data_len");
    private static final int PRIVATE_DATA = Layout.intValue("cm_event.private_data");
    private static final int PRIVATE_DATA_MAX = Layout.intValue("cm_event.private_data_max");

    private final ByteBuffer privateData;

    public CmEvent() {
        super("cm_event", 1, 0);
        this.privateData = buffer.slice(HEADER + PRIVATE_DATA, PRIVATE_DATA_MAX).asReadOnlyBuffer();
    }

    /** The librdmacm event, for {@link RdmaCm#ackEvent}; 0 once acked. */
    public long eventHandle() {
        return buffer.getLong(HEADER + EVENT);
    }

    /** {@code rdma_ack_cm_event} of the current event (once; later calls return -EINVAL). */
    public int ack() {
        long event = eventHandle();
        buffer.putLong(HEADER + EVENT, 0L);
        return Native.ackCmEvent(event);
    }

    /** {@link RdmaCm#EVENT_CONNECT_REQUEST}, {@link RdmaCm#EVENT_ESTABLISHED}, ... */
    public int type() {
        return buffer.getInt(HEADER + TYPE);
    }

    /** 0, a negative errno, or (REJECTED) the transport's reject reason. */
    public int status() {
        return buffer.getInt(HEADER + STATUS);
    }

    /** The CM id the event is about; on CONNECT_REQUEST a new id for the connection. */
    public long id() {
        return buffer.getLong(HEADER + ID);
    }

    /** The listening id a CONNECT_REQUEST arrived on; 0 otherwise. */
    public long listenId() {
        return buffer.getLong(HEADER + LISTEN_ID);
    }

    public int qpNum() {
        return buffer.getInt(HEADER + QP_NUM);
    }

    public int responderResources() {
        return Byte.toUnsignedInt(buffer.get(HEADER + RESPONDER_RESOURCES));
    }

    public int initiatorDepth() {
        return Byte.toUnsignedInt(buffer.get(HEADER + INITIATOR_DEPTH));
    }

    public int flowControl() {
        return Byte.toUnsignedInt(buffer.get(HEADER + FLOW_CONTROL));
    }

    public int retryCount() {
        return Byte.toUnsignedInt(buffer.get(HEADER + RETRY_COUNT));
    }

    public int rnrRetryCount() {
        return Byte.toUnsignedInt(buffer.get(HEADER + RNR_RETRY_COUNT));
    }

    public boolean srq() {
        return buffer.get(HEADER + SRQ) != 0;
    }

    /** Length of the private data (the transport may pad: an IB/RoCE CM REQ carries 56 bytes). */
    public int privateDataLength() {
        return Byte.toUnsignedInt(buffer.get(HEADER + PRIVATE_DATA_LEN));
    }

    /**
     * The private data, read-only, position 0 and limit {@link #privateDataLength()}. The same
     * buffer is returned every time; it is overwritten by the next {@link RdmaCm#getEvent}.
     * Byte order is the caller's choice (NVMe/RDMA private data is little-endian).
     */
    public ByteBuffer privateData() {
        return privateData.clear().limit(privateDataLength());
    }
}
