package io.nvmf4j.core;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.config.ListenerConfig;

/**
 * How a listener of one transport fills its discovery log entry (NVMe-oF 1.1 figure 39): TRTYPE, ADRFAM, TREQ and
 * TSAS. Each transport type provides them; the discovery log page finds them through {@link Target#fieldsOf}.
 */
public interface DiscoveryEntryFields {
    /** TRTYPE (1 = RDMA, 3 = TCP). */
    int trtype();

    /** ADRFAM for this address. */
    int adrfam(String address);

    /** TREQ of {@code listener}'s entry. */
    int treq(ListenerConfig listener);

    /** Writes {@code listener}'s TSAS (256 bytes at {@code offset}, already zeroed). */
    void putTsas(ByteBuf entry, int offset, ListenerConfig listener);
}
