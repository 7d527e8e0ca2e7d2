package io.nvmf4j.service.state;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmf4j.ControlException;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;

import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Applies a whole (validated) document to the live target as a diff of control calls: first everything
 * that disappears or changes is removed, then everything new or changed is added, so names, nsids and
 * ports are free when they are reused. A changed bdev, namespace or subsystem identity (serial, model,
 * maxNamespaces, cntlid range) is removed and added again; hosts, listeners, allowAnyHost, referrals and the
 * discovery subsystem's host keys change in place; engine, cores, idleStrategy, socketIo, tcp, rdma, spdk, api and metrics
 * are stored for the next start.
 * Identities the import leaves out (serial, NGUID, UUID) are kept from the live object of the same NQN / nsid and
 * bdev. The lists end in the imported document's order, and an undone import puts them back in theirs.
 *
 * <p>If a step fails, every step already done is undone (newest first) and the failure is rethrown.
 */
final class ConfigImport {
    private static final ObjectMapper MAPPER = ConfigStore.mapper();

    private final ConfigController<?> t;
    private final TargetConfig have;
    private final TargetConfig want;
    private final Set<String> changedBdevs = new HashSet<>();
    private final Set<String> removedNamespaces = new HashSet<>();
    private final Undo undo = new Undo();

    private ConfigImport(ConfigController<?> t, TargetConfig want) {
        this.t = t;
        this.have = t.configSnapshot();
        this.want = ConfigService.copy(want, TargetConfig.class);
    }

    /** Applies {@code want}; returns the inverse of all it did (for when the save fails). */
    static Undo apply(ConfigController<?> t, TargetConfig want) {
        ConfigImport i = new ConfigImport(t, want);
        try {
            i.undo.push(() -> t.orderLike(i.have)); // runs last: what the undo put back goes where it was
            i.keepIdentities();
            i.probeNewListeners();
            i.removeWhatGoes();
            i.applyLegacyNqns();
            i.addWhatComes();
            t.replaceQos(i.want); // live: a namespace whose qos alone changes stays
            t.orderLike(i.want);
            return i.undo;
        } catch (RuntimeException e) {
            i.undo.runAll();
            throw e;
        }
    }

    /**
     * Binding a new port is the one step that validation cannot foresee; try each before anything is
     * removed, so a refused import does not first destroy (and recreate empty) malloc bdevs.
     */
    /**
     * Whether {@code listeners} has {@code l} with the same secure channel: one whose secure channel changes goes and
     * comes again (removed from every subsystem first, so they never disagree on it halfway).
     */
    private static boolean sameListener(java.util.List<ListenerConfig> listeners, ListenerConfig l) {
        int i = listeners.indexOf(l);
        return i >= 0 && listeners.get(i).secureChannelOrDefault().equals(l.secureChannelOrDefault());
    }

    /** A listener kept by the import: its ANA states change in place (hosts through it get the ANA event). */
    private void changeAnaStates(String nqn, ListenerConfig had, ListenerConfig wanted) {
        java.util.Set<String> groups = new java.util.TreeSet<>();
        Map<String, String> before = had.anaStates == null ? Map.of() : had.anaStates;
        Map<String, String> after = wanted.anaStates == null ? Map.of() : wanted.anaStates;
        groups.addAll(before.keySet());
        groups.addAll(after.keySet());
        for (String g : groups) {
            String from = before.getOrDefault(g, "optimized");
            String to = after.getOrDefault(g, "optimized");
            if (!from.equals(to)) {
                t.setAnaState(nqn, wanted, Integer.parseInt(g), to);
                undo.push(() -> t.setAnaState(nqn, wanted, Integer.parseInt(g), from));
            }
        }
    }

    private void probeNewListeners() {
        Set<ListenerConfig> bound = t.listeners().keySet();
        for (SubsystemConfig w : want.subsystems) {
            for (ListenerConfig l : w.listeners) {
                if (!bound.contains(l)) {
                    try {
                        t.probeListener(l);
                    } catch (ControlException e) {
                        throw new ControlException(e.kind(), e.getMessage() + " (nothing was changed)");
                    }
                }
            }
        }
    }

    private void keepIdentities() {
        for (SubsystemConfig w : want.subsystems) {
            SubsystemConfig h = subsystem(have, w.nqn);
            if (h == null) {
                continue;
            }
            if (w.serial == null) {
                w.serial = h.serial;
            }
            for (NamespaceConfig wn : w.namespaces) {
                NamespaceConfig hn = namespace(h, wn.nsid);
                if (hn != null && Objects.equals(hn.bdev, wn.bdev)) {
                    wn.nguid = wn.nguid == null ? hn.nguid : wn.nguid;
                    wn.uuid = wn.uuid == null ? hn.uuid : wn.uuid;
                }
            }
        }
        for (BdevConfig b : have.bdevs) {
            if (!same(b, want.bdev(b.name))) {
                changedBdevs.add(b.name);
            }
        }
    }

    private void removeWhatGoes() {
        for (SubsystemConfig h : have.subsystems) {
            SubsystemConfig w = subsystem(want, h.nqn);
            if (w == null || identityChanged(h, w)) {
                t.removeSubsystem(h.nqn);
                undo.push(() -> t.addSubsystem(copy(h)));
                continue;
            }
            for (NamespaceConfig hn : h.namespaces) {
                if (!sameButQos(hn, namespace(w, hn.nsid)) || changedBdevs.contains(hn.bdev)) {
                    t.removeNamespace(h.nqn, hn.nsid);
                    removedNamespaces.add(h.nqn + "/" + hn.nsid);
                    undo.push(() -> t.addNamespace(h.nqn, copy(hn)));
                }
            }
            for (String host : h.hosts) {
                if (!w.hosts.contains(host) || !Objects.equals(keyOf(h, host), keyOf(w, host))) {
                    t.removeHost(h.nqn, host);
                    undo.push(() -> t.addHost(h.nqn, host, keyOf(h, host)));
                }
            }
            for (ListenerConfig l : h.listeners) {
                if (!sameListener(w.listeners, l)) {
                    t.removeListener(h.nqn, l);
                    undo.push(() -> t.addListener(h.nqn, l));
                }
            }
        }
        for (ReferralConfig r : have.referrals) {
            if (!want.referrals.contains(r)) {
                t.removeReferral(r);
                undo.push(() -> t.addReferral(r));
            }
        }
        for (HostKeyConfig k : discoveryKeys(have)) {
            if (!discoveryKeys(want).contains(k)) {
                t.removeDiscoveryHostKey(k.host);
                undo.push(() -> t.addDiscoveryHostKey(k));
            }
        }
        for (BdevConfig b : have.bdevs) {
            if (changedBdevs.contains(b.name)) {
                t.removeBdev(b.name);
                undo.push(() -> t.addBdev(copy(b)));
            }
        }
    }

    private void addWhatComes() {
        for (BdevConfig b : want.bdevs) {
            if (have.bdev(b.name) == null || changedBdevs.contains(b.name)) {
                t.addBdev(copy(b));
                undo.push(() -> t.removeBdev(b.name));
            }
        }
        for (SubsystemConfig w : want.subsystems) {
            SubsystemConfig h = subsystem(have, w.nqn);
            if (h == null || identityChanged(h, w)) {
                t.addSubsystem(copy(w));
                undo.push(() -> t.removeSubsystem(w.nqn));
                continue;
            }
            for (String host : w.hosts) {
                if (!h.hosts.contains(host) || !Objects.equals(keyOf(h, host), keyOf(w, host))) {
                    t.addHost(w.nqn, host, keyOf(w, host));
                    undo.push(() -> t.removeHost(w.nqn, host));
                }
            }
            for (ListenerConfig l : w.listeners) {
                if (!sameListener(h.listeners, l)) {
                    t.addListener(w.nqn, l);
                    undo.push(() -> t.removeListener(w.nqn, l));
                } else {
                    changeAnaStates(w.nqn, h.listeners.get(h.listeners.indexOf(l)), l);
                }
            }
            if (h.allowAnyHost != w.allowAnyHost) {
                t.setAllowAnyHost(w.nqn, w.allowAnyHost);
                undo.push(() -> t.setAllowAnyHost(w.nqn, h.allowAnyHost));
            }
            for (NamespaceConfig wn : w.namespaces) {
                if (namespace(h, wn.nsid) == null || removedNamespaces.contains(w.nqn + "/" + wn.nsid)) {
                    t.addNamespace(w.nqn, copy(wn));
                    undo.push(() -> t.removeNamespace(w.nqn, wn.nsid));
                }
            }
        }
        for (ReferralConfig r : want.referrals) {
            if (!have.referrals.contains(r)) {
                t.addReferral(r);
                undo.push(() -> t.removeReferral(r));
            }
        }
        for (HostKeyConfig k : discoveryKeys(want)) {
            if (!discoveryKeys(have).contains(k)) {
                t.addDiscoveryHostKey(k);
                undo.push(() -> t.removeDiscoveryHostKey(k.host));
            }
        }
        if (!Objects.equals(want.engine, have.engine) || want.cores != have.cores || !Objects.equals(want.idleStrategy, have.idleStrategy)
            || !Objects.equals(want.socketIo, have.socketIo)
            || !same(want.tcp, have.tcp) || !same(want.rdma, have.rdma) || !same(want.spdk, have.spdk)
            || !same(want.api, have.api)
            || !sameOrBothAbsent(want.metrics, have.metrics)) {
            t.setStartupSettings(want);
            undo.push(() -> t.setStartupSettings(have));
        }
    }

    /**
     * {@code allowLegacyNqns} between the removals and the additions: legacy names that go are gone before it
     * turns off, and it is on before legacy names come.
     */
    private void applyLegacyNqns() {
        if (want.allowLegacyNqns != have.allowLegacyNqns) {
            TargetConfig flagged = t.configSnapshot();
            flagged.allowLegacyNqns = want.allowLegacyNqns;
            t.setStartupSettings(flagged);
            undo.push(() -> t.setStartupSettings(have));
        }
    }

    private static boolean identityChanged(SubsystemConfig h, SubsystemConfig w) {
        return !Objects.equals(h.serial, w.serial) || !Objects.equals(h.model, w.model)
            || h.maxNamespaces != w.maxNamespaces || h.minCntlid != w.minCntlid || h.maxCntlid != w.maxCntlid
            || !unlistedKeys(h).equals(unlistedKeys(w));
    }

    /** The discovery subsystem's host keys (TLS PSKs) of a document; none when it has no discovery section. */
    private static java.util.List<HostKeyConfig> discoveryKeys(TargetConfig c) {
        return c.discovery == null ? java.util.List.of() : c.discovery.hostKeys;
    }

    /** The DH-HMAC-CHAP keys of a host, or null. */
    private static HostKeyConfig keyOf(SubsystemConfig s, String host) {
        return s.hostKeys.stream().filter(k -> host.equals(k.host)).findFirst().orElse(null);
    }

    /** Keys of hosts outside the hosts list (admitted by allowAnyHost): no host call carries them, so they are identity. */
    private static java.util.Set<HostKeyConfig> unlistedKeys(SubsystemConfig s) {
        java.util.Set<HostKeyConfig> out = new java.util.HashSet<>();
        for (HostKeyConfig k : s.hostKeys) {
            if (!s.hosts.contains(k.host)) {
                out.add(k);
            }
        }
        return out;
    }

    private static SubsystemConfig subsystem(TargetConfig c, String nqn) {
        for (SubsystemConfig s : c.subsystems) {
            if (s.nqn.equals(nqn)) {
                return s;
            }
        }
        return null;
    }

    private static NamespaceConfig namespace(SubsystemConfig s, int nsid) {
        for (NamespaceConfig n : s.namespaces) {
            if (n.nsid == nsid) {
                return n;
            }
        }
        return null;
    }

    /** {@link #same}, apart from the QoS (which changes live, {@link ConfigController#replaceQos}). */
    private static boolean sameButQos(NamespaceConfig a, NamespaceConfig b) {
        if (a == null || b == null) {
            return false;
        }
        NamespaceConfig x = ConfigService.copy(a, NamespaceConfig.class);
        NamespaceConfig y = ConfigService.copy(b, NamespaceConfig.class);
        x.qos = null;
        y.qos = null;
        return same(x, y);
    }

    /** Same definition: equal as JSON (the model classes have no equals of their own). */
    private static boolean same(Object a, Object b) {
        return a != null && b != null && MAPPER.valueToTree(a).equals(MAPPER.valueToTree(b));
    }

    /** {@link #same}, or both absent (an optional section such as {@code metrics}). */
    private static boolean sameOrBothAbsent(Object a, Object b) {
        return a == null || b == null ? a == b : same(a, b);
    }

    @SuppressWarnings("unchecked")
    private static <T> T copy(T value) {
        return ConfigService.copy(value, (Class<T>) value.getClass());
    }
}
