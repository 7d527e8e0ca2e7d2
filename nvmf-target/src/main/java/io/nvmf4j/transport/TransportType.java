package io.nvmf4j.transport;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.cmd.CommandDispatcher;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.core.DiscoveryEntryFields;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.nvme.DiscoveryLog;
import io.nvmf4j.runtime.PollGroups;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * A kind of transport, as the registry knows it: the name used in the configuration's {@code transport}
 * fields, the fields it puts in a discovery log entry (TRTYPE, ADRFAM, TSAS: NVMe-oF 1.1 figure 39), and
 * how to create the running {@link Transport}. One instance per kind ({@code TcpTransport.TYPE},
 * {@code RdmaTransport.TYPE}), so types compare by identity.
 */
public abstract class TransportType implements DiscoveryEntryFields {
    private final String name;
    private final int trtype;

    protected TransportType(String name, int trtype) {
        this.name = name;
        this.trtype = trtype;
    }

    /** The configuration's name for it ({@code "tcp"}, {@code "rdma"}). */
    public final String name() {
        return name;
    }

    /** TRTYPE of a discovery log entry (1 = RDMA, 3 = TCP). */
    public final int trtype() {
        return trtype;
    }

    /** ADRFAM of a discovery log entry for this address: IPv4 or IPv6 for the IP-based transports. */
    public int adrfam(String address) {
        try {
            return InetAddress.getByName(address) instanceof Inet6Address
                ? DiscoveryLog.ADRFAM_IPV6 : DiscoveryLog.ADRFAM_IPV4;
        } catch (UnknownHostException e) {
            return DiscoveryLog.ADRFAM_IPV4;
        }
    }

    /** Writes the transport specific address subtype (TSAS, 256 bytes at {@code offset}, already zeroed). */
    public void putTsas(ByteBuf entry, int offset) {
    }

    /** The TSAS of {@code listener}'s entry; by default the same for every listener ({@link #putTsas(ByteBuf, int)}). */
    public void putTsas(ByteBuf entry, int offset, ListenerConfig listener) {
        putTsas(entry, offset);
    }

    /** TREQ of {@code listener}'s entry: secure channel not specified, SQ flow control disable supported. */
    public int treq(ListenerConfig listener) {
        return DiscoveryLog.TREQ_DISABLE_SQFLOW;
    }

    /**
     * Checks, without keeping anything, that a listener not bound yet could be bound (used before an import
     * removes anything). Transports that cannot tell in advance accept.
     */
    public void probe(ListenerConfig listener) throws IOException {
    }

    /** Creates the running transport for a java-engine target. */
    public abstract Transport create(Context context);

    @Override
    public String toString() {
        return name;
    }

    /** What a transport is built from: the command dispatcher, the document, the poll groups, the observer. */
    public record Context(CommandDispatcher dispatcher, TargetConfig config, PollGroups pollGroups, IoObserver observer) {
    }
}
