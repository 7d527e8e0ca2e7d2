package io.nvmf4j.core;

import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.engine.IoObserver;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/** The set of subsystems a target serves, the discovery subsystem and its log generation counter. */
public final class Target {
    /** Listener → the port it is bound to (written by the engine under its lock, read by admin queues). */
    private final java.util.Map<ListenerConfig, Integer> boundPorts = new java.util.concurrent.ConcurrentHashMap<>();

    /** Listeners whose transport cannot run here (not advertised); written by the engine under its lock. */
    private final java.util.Set<ListenerConfig> notServing = ConcurrentHashMap.newKeySet();

    public static final String FIRMWARE = "0.1.0";

    private final Map<String, Subsystem> subsystems = new ConcurrentHashMap<>();
    private final Subsystem discovery;
    private final AtomicLong discoveryGeneration = new AtomicLong(1);
    private volatile List<ListenerConfig> referrals = List.of();

    private final IoObserver observer;
    private volatile Function<String, ? extends DiscoveryEntryFields> entryFields = name -> {
        throw new IllegalStateException("no transport registered for the discovery log (" + name + ")");
    };
    /** DH-HMAC-CHAP: how long after its Connect a queue may take to authenticate (TargetConfig.authTimeoutMs). */
    private volatile int authTimeoutMs = io.nvmf4j.config.TargetConfig.DEFAULT_AUTH_TIMEOUT_MS;
    /** Command Quiesce Time (TargetConfig.commandQuiesceTimeMs): Identify's CQT and each controller's drain bound. */
    private volatile int commandQuiesceTimeMs = io.nvmf4j.config.TargetConfig.DEFAULT_COMMAND_QUIESCE_TIME_MS;

    public Target() {
        this(IoObserver.NONE);
    }

    public Target(IoObserver observer) {
        this.observer = observer;
        this.discovery = new Subsystem(Subsystem.DISCOVERY_NQN, true, "nvmf4j-discovery", "nvmf4j discovery",
            FIRMWARE, 0, 1, 0xFFEF, true);
    }

    public IoObserver observer() {
        return observer;
    }

    /**
     * Tells the discovery log how each transport fills its entries: {@code fields} maps a listener's {@code transport}
     * to them (the engine's transport registry).
     */
    public void setDiscoveryEntryFields(Function<String, ? extends DiscoveryEntryFields> fields) {
        this.entryFields = fields;
    }

    /** How listeners of transport {@code name} fill their discovery log entries. */
    public DiscoveryEntryFields fieldsOf(String name) {
        return entryFields.apply(name);
    }

    public int authTimeoutMs() {
        return authTimeoutMs;
    }

    public void setAuthTimeoutMs(int ms) {
        this.authTimeoutMs = ms;
    }

    public int commandQuiesceTimeMs() {
        return commandQuiesceTimeMs;
    }

    public void setCommandQuiesceTimeMs(int ms) {
        this.commandQuiesceTimeMs = ms;
    }

    public Subsystem discovery() {
        return discovery;
    }

    /** The subsystem with this NQN (the discovery NQN included), or null. */
    public Subsystem subsystem(String nqn) {
        if (Subsystem.DISCOVERY_NQN.equals(nqn)) {
            return discovery;
        }
        return subsystems.get(nqn);
    }

    /** NVM subsystems (not the discovery subsystem), in no particular order. */
    public List<Subsystem> nvmSubsystems() {
        return new ArrayList<>(subsystems.values());
    }

    public void addSubsystem(Subsystem s) {
        if (subsystems.putIfAbsent(s.nqn(), s) != null) {
            throw new IllegalArgumentException("subsystem " + s.nqn() + " already exists");
        }
        discoveryChanged();
    }

    /** Removes a subsystem and tears down its controllers; returns it, or null when absent. */
    public Subsystem removeSubsystem(String nqn) {
        Subsystem s = subsystems.remove(nqn);
        if (s != null) {
            s.markRemoved();
            for (Controller c : s.controllers()) {
                c.destroy("subsystem " + nqn + " removed");
            }
            discoveryChanged();
        }
        return s;
    }

    /**
     * Records the port a listener is actually bound to (differs from its configured port when that is 0),
     * for the discovery log; null forgets it.
     */
    public void setBoundPort(ListenerConfig l, Integer port) {
        if (port == null) {
            boundPorts.remove(l);
        } else {
            boundPorts.put(l, port);
        }
    }

    /**
     * Marks a listener that does not serve (its transport cannot run here): the discovery log leaves it out, so
     * that hosts are never sent to an address nobody answers on; false clears the mark.
     */
    public void setNotServing(ListenerConfig l, boolean failed) {
        if (failed) {
            notServing.add(l);
        } else {
            notServing.remove(l);
        }
    }

    /** Whether hosts may be sent to {@code l} (not marked by {@link #setNotServing}). */
    public boolean isServing(ListenerConfig l) {
        return !notServing.contains(l);
    }

    /** The port {@code l} is bound to, or its configured port when it is not bound (a referral). */
    public int portOf(ListenerConfig l) {
        Integer p = boundPorts.get(l);
        return p != null ? p : l.port;
    }

    /** Other discovery services listed in the discovery log (subtype 1). */
    public List<ListenerConfig> referrals() {
        return referrals;
    }

    public void setReferrals(List<ListenerConfig> referrals) {
        this.referrals = List.copyOf(referrals);
        discoveryChanged();
    }

    public long discoveryGeneration() {
        return discoveryGeneration.get();
    }

    /** Bumps the discovery log generation and raises the discovery-change AEN on discovery controllers. */
    public void discoveryChanged() {
        discoveryGeneration.incrementAndGet();
        for (Controller c : discovery.controllers()) {
            c.adminQueue().executor().execute(() ->
                c.raiseEvent(Controller.AEN_DISCOVERY_CHANGED, Controller.AEC_DISCOVERY_LOG));
        }
    }

    /** Every live controller of every subsystem, the discovery ones included. */
    public List<Controller> allControllers() {
        List<Controller> out = new ArrayList<>(discovery.controllers());
        for (Subsystem s : subsystems.values()) {
            out.addAll(s.controllers());
        }
        return out;
    }
}
