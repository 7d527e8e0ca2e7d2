package io.nvmf4j.engine;

import io.nvmf4j.ControlException;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;

import io.nvmf4j.nvme.AnaLog;
import io.nvmf4j.nvme.AnaState;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.BitSet;
import java.util.List;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * The document rules of the control layer ({@link ConfigController}), applied before an engine touches its data
 * path: a change is checked by validating the document with the change applied (identities filled in; see
 * {@link ConfigValidator#validateChange} for the calls that change one item), and the lookups answer not-found or
 * conflict the same way whichever engine runs.
 */
public final class ConfigDocument {
    private static final ObjectMapper MAPPER = ConfigStore.mapper();

    private ConfigDocument() {
    }

    /** A deep copy (through JSON, so nothing is shared). */
    public static TargetConfig copy(TargetConfig c) {
        return ConfigStore.parse(ConfigStore.toJson(c));
    }

    /** A deep copy of one subsystem (through JSON, so nothing is shared). */
    public static SubsystemConfig copy(SubsystemConfig s) {
        try {
            return MAPPER.readValue(MAPPER.writeValueAsBytes(s), SubsystemConfig.class);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A copy of {@code current} with {@code change} applied, identities assigned and validated. */
    public static TargetConfig validatedWith(TargetConfig current, Consumer<TargetConfig> change) {
        TargetConfig next = copy(current);
        change.accept(next);
        ConfigStore.assignIdentities(next);
        ConfigValidator.validate(next);
        return next;
    }

    /**
     * {@code current} with the settings that take effect at the next start ({@code engine}, {@code cores},
     * {@code idleStrategy}, {@code socketIo}, {@code tcp}, {@code rdma}, {@code spdk}, {@code api}, {@code metrics},
     * {@code authTimeoutMs}) and the
     * document-wide {@code allowLegacyNqns} (which the validator reads at once) taken from {@code from}, validated.
     */
    public static TargetConfig withStartupSettings(TargetConfig current, TargetConfig from) {
        TargetConfig source = copy(from);
        return validatedWith(current, c -> {
            c.engine = source.engine;
            c.cores = source.cores;
            c.idleStrategy = source.idleStrategy;
            c.socketIo = source.socketIo;
            c.tcp = source.tcp;
            c.rdma = source.rdma;
            c.spdk = source.spdk;
            c.api = source.api;
            c.allowLegacyNqns = source.allowLegacyNqns;
            c.metrics = source.metrics;
            c.authTimeoutMs = source.authTimeoutMs;
        });
    }

    /**
     * Every listener of {@code c} once, in document order, with its state: listening on its {@code bound}
     * address, else failed with its cause from {@code failed}.
     */
    public static Map<ListenerConfig, ListenerState> listenerStates(TargetConfig c,
                                                                    Map<ListenerConfig, InetSocketAddress> bound,
                                                                    Map<ListenerConfig, String> failed) {
        Map<ListenerConfig, ListenerState> out = new LinkedHashMap<>();
        for (SubsystemConfig s : c.subsystems) {
            for (ListenerConfig l : s.listeners) {
                InetSocketAddress a = bound.get(l);
                out.putIfAbsent(l, a != null ? ListenerState.listening(a.getPort())
                    : ListenerState.failed(failed.getOrDefault(l, "not bound")));
            }
        }
        return out;
    }

    /** The listener of {@code s} equal to {@code l} (transport, address, port); not found otherwise. */
    public static ListenerConfig listener(SubsystemConfig s, ListenerConfig l) {
        for (ListenerConfig x : s.listeners) {
            if (x.equals(l)) {
                return x;
            }
        }
        throw ControlException.notFound("subsystem " + s.nqn + " has no listener " + l);
    }

    /**
     * Sets ANA group {@code group}'s state in listener {@code l}'s {@code anaStates} (optimized, the default, is
     * left out); invalid for a group outside 1..{@link AnaLog#GROUPS_MAX} or an unknown state name.
     */
    public static void putAnaState(ListenerConfig l, int group, String state) {
        if (group < 1 || group > AnaLog.GROUPS_MAX) {
            throw ControlException.invalid("group: an ANA group id must be 1.." + AnaLog.GROUPS_MAX + ", got " + group);
        }
        AnaState s = AnaState.byName(state);
        if (s == null) {
            throw ControlException.invalid("state: must be " + AnaState.names() + ", got " + state);
        }
        Map<String, String> states = new TreeMap<>(Comparator.comparingInt(Integer::parseInt));
        if (l.anaStates != null) {
            states.putAll(l.anaStates);
        }
        if (s == AnaState.OPTIMIZED) {
            states.remove(Integer.toString(group));
        } else {
            states.put(Integer.toString(group), s.configName());
        }
        l.anaStates = states.isEmpty() ? null : new LinkedHashMap<>(states);
    }

    /** Whether a subsystem of {@code c} lists listener {@code l} (an engine stops listening on it otherwise). */
    public static boolean listens(TargetConfig c, ListenerConfig l) {
        for (SubsystemConfig s : c.subsystems) {
            if (s.listeners.contains(l)) {
                return true;
            }
        }
        return false;
    }

    /** The key entry of host {@code hostnqn} in {@code s}, or null. */
    public static HostKeyConfig hostKey(SubsystemConfig s, String hostnqn) {
        for (HostKeyConfig k : s.hostKeys) {
            if (hostnqn.equals(k.host)) {
                return k;
            }
        }
        return null;
    }

    /** The subsystem {@code nqn} of {@code c}; not found otherwise. */
    public static SubsystemConfig subsystem(TargetConfig c, String nqn) {
        for (SubsystemConfig s : c.subsystems) {
            if (s.nqn.equals(nqn)) {
                return s;
            }
        }
        throw ControlException.notFound("no subsystem " + nqn);
    }

    /**
     * The namespace {@code nsid} of {@code s} if it is masked (has a {@code hosts} list): hosts are added to and removed
     * from masked namespaces only (the spdk engine cannot mask a namespace added visible to all).
     */
    public static NamespaceConfig maskedNamespace(SubsystemConfig s, int nsid) {
        NamespaceConfig n = namespace(s, nsid);
        if (n == null) {
            throw ControlException.notFound("no namespace " + nsid + " in " + s.nqn);
        }
        if (n.hosts == null) {
            throw ControlException.invalid("hosts: namespace " + nsid + " of " + s.nqn + " is visible to every host; "
                + "to mask it, add it with a hosts list (remove it and add it again with \"hosts\": [...])");
        }
        return n;
    }

    /** Namespace {@code nsid} of {@code s}, or null. */
    public static NamespaceConfig namespace(SubsystemConfig s, int nsid) {
        for (NamespaceConfig n : s.namespaces) {
            if (n.nsid == nsid) {
                return n;
            }
        }
        return null;
    }

    /** Conflict when {@code bdev} already backs a namespace of {@code c}. */
    public static void checkBdevFree(TargetConfig c, String bdev) {
        for (SubsystemConfig s : c.subsystems) {
            for (NamespaceConfig n : s.namespaces) {
                if (n.bdev != null && n.bdev.equals(bdev)) {
                    throw ControlException.conflict("bdev " + bdev + " already backs namespace " + n.nsid + " of "
                        + s.nqn);
                }
            }
        }
    }

    /** Conflict when {@code bdev} backs any namespace (it cannot be removed then). */
    public static void checkBdevUnused(TargetConfig c, String bdev) {
        for (BdevConfig b : c.bdevs) {
            if ("error".equals(b.type) && bdev.equals(b.base)) {
                throw ControlException.conflict("bdev " + bdev + " is the base of error bdev " + b.name);
            }
        }
        for (PoolConfig p : c.pools) {
            if (bdev.equals(p.baseBdev)) {
                throw ControlException.conflict("bdev " + bdev + " holds the lvol store of pool " + p.name);
            }
        }
        for (SubsystemConfig s : c.subsystems) {
            for (NamespaceConfig n : s.namespaces) {
                if (bdev.equals(n.bdev)) {
                    throw ControlException.conflict("bdev " + bdev + " backs namespace " + n.nsid + " of " + s.nqn);
                }
            }
        }
    }

    /**
     * Fills in the nsid of a namespace about to be added to {@code sc} (0: the lowest free one) or refuses a
     * taken one (conflict).
     */
    public static void assignNsid(SubsystemConfig sc, NamespaceConfig n) {
        if (n.nsid == 0) {
            n.nsid = lowestFreeNsid(sc);
        } else if (namespace(sc, n.nsid) != null) {
            throw ControlException.conflict("nsid " + n.nsid + " is already in use in " + sc.nqn);
        }
    }

    /** The lowest nsid {@code sc} does not use; conflict when all of 1..maxNamespaces are taken. */
    public static int lowestFreeNsid(SubsystemConfig sc) {
        BitSet used = new BitSet();
        for (NamespaceConfig n : sc.namespaces) {
            if (n.nsid > 0) {
                used.set(n.nsid);
            }
        }
        int nsid = used.nextClearBit(1);
        if (nsid <= sc.maxNamespaces) {
            return nsid;
        }
        throw ControlException.conflict("subsystem " + sc.nqn + " has no free nsid (maxNamespaces "
            + sc.maxNamespaces + ")");
    }

    /**
     * Puts the lists of the live document {@code live} in the order of {@code order} (after an import that made
     * them hold the same items): bdevs by name, subsystems by NQN and, inside each, hosts, host keys, namespaces
     * (by nsid) and listeners, then referrals and the discovery subsystem's host keys. An import keeps what stays in place and appends what it adds, so
     * without this the document read back would depend on what was there before; items {@code order} lacks keep
     * their place after the others. The document's rule that an error bdev follows its base holds, since
     * {@code order} was validated.
     */
    public static void orderLike(TargetConfig live, TargetConfig order) {
        sortLike(live.bdevs, order.bdevs, b -> b.name);
        sortLike(live.subsystems, order.subsystems, s -> s.nqn);
        sortLike(live.referrals, order.referrals, r -> r);
        if (live.discovery != null && order.discovery != null) {
            sortLike(live.discovery.hostKeys, order.discovery.hostKeys, k -> k.host);
        }
        for (SubsystemConfig s : live.subsystems) {
            SubsystemConfig o = order.subsystems.stream().filter(x -> java.util.Objects.equals(x.nqn, s.nqn))
                .findFirst().orElse(null);
            if (o != null) {
                sortLike(s.hosts, o.hosts, h -> h);
                sortLike(s.hostKeys, o.hostKeys, k -> k.host);
                sortLike(s.namespaces, o.namespaces, n -> n.nsid);
                sortLike(s.listeners, o.listeners, l -> l);
            }
        }
    }

    private static <T> void sortLike(java.util.List<T> live, java.util.List<T> order,
                                     java.util.function.Function<T, Object> key) {
        if (live == null || order == null) {
            return;
        }
        Map<Object, Integer> rank = new java.util.HashMap<>();
        for (T t : order) {
            rank.putIfAbsent(key.apply(t), rank.size());
        }
        live.sort(Comparator.comparingInt(t -> rank.getOrDefault(key.apply(t), Integer.MAX_VALUE)));
    }
}
