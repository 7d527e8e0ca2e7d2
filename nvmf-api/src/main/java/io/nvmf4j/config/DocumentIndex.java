package io.nvmf4j.config;

import java.util.AbstractSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The cross-document facts of a valid configuration document, kept so that a change to one bdev or one subsystem is
 * checked against the rest without walking it ({@link ConfigValidator#validateChange}): bdev names, subsystem NQNs,
 * which subsystem uses each bdev, the namespace identifiers (NGUID, UUID, EUI-64) and the secure channel of each
 * listener address. The index follows the document through {@link #addBdev}, {@link #removeBdev},
 * {@link #addSubsystem} and {@link #removeSubsystem}; its owner rebuilds it ({@link #of}) after any other change.
 * Not thread-safe: its owner serialises changes.
 */
public final class DocumentIndex {
    private final Set<String> bdevNames = new HashSet<>();
    private final Map<String, BdevConfig> bdevs = new HashMap<>();
    private final Set<String> nqns = new HashSet<>();
    private final Map<String, SubsystemConfig> subsystems = new HashMap<>();
    private final Map<String, SubsystemConfig> bdevUsers = new HashMap<>();
    private final Map<String, String> identities = new HashMap<>();
    /** Listener (transport, address, port) → its secure channel and how many listener entries name it. */
    private final Map<ListenerConfig, Use> listeners = new HashMap<>();
    /** Bdevs whose rules reach across the document (rbd, error): a document with any is validated whole. */
    private int crossBdevs;
    /** Namespaces, host entries and listeners looked at since the index was made (the work of checking changes). */
    private long visited;

    private static final class Use {
        final String secureChannel;
        int count;

        Use(String secureChannel) {
            this.secureChannel = secureChannel;
        }
    }

    private DocumentIndex() {
    }

    /** The index of {@code c} (a valid document: names, NQNs, bdev users and identities are unique). */
    public static DocumentIndex of(TargetConfig c) {
        DocumentIndex x = new DocumentIndex();
        for (BdevConfig b : c.bdevs) {
            x.addBdev(b);
        }
        for (SubsystemConfig s : c.subsystems) {
            x.addSubsystem(s);
        }
        x.visited = 0;
        return x;
    }

    public void addBdev(BdevConfig b) {
        bdevNames.add(b.name);
        bdevs.putIfAbsent(b.name, b);
        if (crossesDocument(b)) {
            crossBdevs++;
        }
    }

    public void removeBdev(BdevConfig b) {
        bdevNames.remove(b.name);
        bdevs.remove(b.name);
        if (crossesDocument(b)) {
            crossBdevs--;
        }
    }

    private static boolean crossesDocument(BdevConfig b) {
        return "rbd".equals(b.type) || "error".equals(b.type);
    }

    public void addSubsystem(SubsystemConfig s) {
        nqns.add(s.nqn);
        subsystems.put(s.nqn, s);
        for (NamespaceConfig n : s.namespaces) {
            visited++;
            if (n.bdev != null) {
                bdevUsers.put(n.bdev, s);
            }
            String owner = "namespace " + n.nsid + " of " + s.nqn;
            putIdentity("nguid", n.nguid, owner);
            putIdentity("uuid", n.uuid, owner);
            putIdentity("eui64", n.eui64, owner);
        }
        for (ListenerConfig l : s.listeners) {
            visited++;
            listeners.computeIfAbsent(key(l), k -> new Use(l.secureChannelOrDefault())).count++;
        }
    }

    public void removeSubsystem(SubsystemConfig s) {
        nqns.remove(s.nqn);
        subsystems.remove(s.nqn, s);
        for (NamespaceConfig n : s.namespaces) {
            visited++;
            if (n.bdev != null) {
                bdevUsers.remove(n.bdev, s);
            }
            identities.remove(identityKey("nguid", n.nguid));
            identities.remove(identityKey("uuid", n.uuid));
            identities.remove(identityKey("eui64", n.eui64));
        }
        for (ListenerConfig l : s.listeners) {
            visited++;
            Use u = listeners.get(key(l));
            if (u != null && --u.count == 0) {
                listeners.remove(key(l));
            }
        }
    }

    private void putIdentity(String kind, String value, String owner) {
        if (value != null) {
            identities.putIfAbsent(identityKey(kind, value), owner);
        }
    }

    /** The key {@link ConfigValidator} gives an identifier: its kind and its hex digits in lower case. */
    private static String identityKey(String kind, String value) {
        return value == null ? null : kind + ":" + value.replace("-", "").toLowerCase(Locale.ROOT);
    }

    private static ListenerConfig key(ListenerConfig l) {
        return new ListenerConfig(l.transport, l.address, l.port);
    }

    /** Bdev {@code name} (not a volume), or null. */
    public BdevConfig bdev(String name) {
        return bdevs.get(name);
    }

    /** Subsystem {@code nqn}, or null. */
    public SubsystemConfig subsystem(String nqn) {
        return subsystems.get(nqn);
    }

    /** The subsystem with a namespace on bdev {@code name}, or null. */
    public SubsystemConfig bdevUser(String name) {
        return bdevUsers.get(name);
    }

    /** Whether the document has a bdev whose rules reach across the document (rbd, error). */
    public boolean hasCrossBdevs() {
        return crossBdevs > 0;
    }

    Set<String> bdevNames() {
        return bdevNames;
    }

    Set<String> nqns() {
        return nqns;
    }

    Map<String, String> identities() {
        return identities;
    }

    /** The bdevs in use, as the validator adds them while it checks subsystem {@code s}. */
    Set<String> usedBdevs(SubsystemConfig s) {
        return new AbstractSet<>() {
            @Override
            public boolean add(String bdev) {
                return bdevUsers.putIfAbsent(bdev, s) == null;
            }

            @Override
            public boolean contains(Object bdev) {
                return bdevUsers.containsKey(bdev);
            }

            @Override
            public Iterator<String> iterator() {
                return bdevUsers.keySet().iterator();
            }

            @Override
            public int size() {
                return bdevUsers.size();
            }
        };
    }

    /**
     * Whether every listener of {@code listeners} agrees with the secure channel the document gives that listener
     * address elsewhere (one socket serves every subsystem on it).
     */
    boolean secureChannelsAgree(List<ListenerConfig> listeners) {
        for (ListenerConfig l : listeners) {
            visited++;
            if (l == null || l.address == null || l.transport == null) {
                continue;
            }
            Use u = this.listeners.get(key(l));
            if (u != null && !u.secureChannel.equals(l.secureChannelOrDefault())) {
                return false;
            }
        }
        return true;
    }

    void visit(int items) {
        visited += items;
    }

    /** Namespaces, host entries and listeners looked at since the index was made (tests count the work of a change). */
    public long visited() {
        return visited;
    }
}
