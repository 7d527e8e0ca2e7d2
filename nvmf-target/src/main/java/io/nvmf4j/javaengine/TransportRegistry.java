package io.nvmf4j.javaengine;

import io.nvmf4j.transport.TransportType;
import io.nvmf4j.transport.rdma.RdmaTransport;
import io.nvmf4j.transport.tcp.TcpTransport;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The transports of the java engine, keyed by their configuration name (Linux nvmet's
 * {@code nvmet_transports[]} indexed by trtype). The engine creates them and its discovery log fills their entries
 * through it; nothing compares transport names.
 */
public final class TransportRegistry {
    private static final TransportRegistry BUILT_IN = new TransportRegistry(List.of(TcpTransport.TYPE,
        RdmaTransport.TYPE));

    private final Map<String, TransportType> byName = new LinkedHashMap<>();

    /** A registry of exactly these types (tests; the service uses {@link #builtIn()}). */
    public TransportRegistry(List<TransportType> types) {
        for (TransportType t : types) {
            if (byName.putIfAbsent(t.name(), t) != null) {
                throw new IllegalArgumentException("transport type " + t.name() + " registered twice");
            }
        }
    }

    /** tcp and rdma. */
    public static TransportRegistry builtIn() {
        return BUILT_IN;
    }

    /** The type registered under {@code name}; an unknown or missing name is an {@link IllegalArgumentException}. */
    public TransportType type(String name) {
        TransportType t = name == null ? null : byName.get(name);
        if (t == null) {
            throw new IllegalArgumentException("unknown transport type " + (name == null ? "(none)" : "'" + name + "'")
                + ": must be " + describe());
        }
        return t;
    }

    /** Whether {@code name} is a registered type. */
    public boolean has(String name) {
        return name != null && byName.containsKey(name);
    }

    /** The registered names, in registration order. */
    public List<String> names() {
        return new ArrayList<>(byName.keySet());
    }

    /** The names as a phrase for messages: {@code "tcp or rdma"}. */
    public String describe() {
        List<String> n = names();
        if (n.size() <= 1) {
            return String.join("", n);
        }
        return String.join(", ", n.subList(0, n.size() - 1)) + " or " + n.get(n.size() - 1);
    }
}
