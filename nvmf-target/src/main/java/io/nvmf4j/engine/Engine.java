package io.nvmf4j.engine;

import io.nvmf4j.ControlException;
import io.nvmf4j.bdev.ErrorBdev;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.EngineCapabilities;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.core.Namespace;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;

/**
 * The seam under the control plane: every call that the REST API, persistence, import, nvmfctl (through
 * the API) and the metrics make on a running target. One engine per process, chosen by the document's
 * {@code "engine"} and started by {@link Engines#start}; {@link #close()} stops it.
 *
 * <p>Control calls check the whole document with the change applied before touching anything; a refused
 * change leaves the engine as it was and throws {@link ControlException} (invalid → 400, not found → 404,
 * conflict → 409). Calls may come from any thread; the engine serialises them.
 */
public interface Engine extends AutoCloseable {
    /** The configuration name of this engine ({@code java}, {@code spdk}). */
    String name();

    /** What this engine can do, as registered for its name ({@link EngineCapabilities}). */
    default EngineCapabilities capabilities() {
        return EngineCapabilities.of(name());
    }

    /** A deep copy of the live document, safe to hand out and to save. */
    TargetConfig configSnapshot();

    /**
     * Orders the live document's lists like {@code order} (which holds the same items): called at the end of a
     * whole-document import so the document read back is the one imported ({@link ConfigDocument#orderLike}).
     */
    void orderLike(TargetConfig order);

    // ------------------------------------------------------------------ bdevs

    BdevConfig addBdev(BdevConfig b);

    /** Refused (conflict) while a namespace uses it, or while removed namespaces still run commands on it. */
    void removeBdev(String name);

    /** Grows a bdev; every namespace on it reports the new size (changed-namespace AEN). Never shrinks. */
    void growBdev(String name, long numBlocks);

    /**
     * Makes error bdev {@code name} fail commands as {@code injection} says (see {@link ErrorBdev}); not found
     * for an unknown bdev, invalid for one that is not an error bdev or a bad injection. Engines without
     * error bdevs refuse it.
     */
    default void injectError(String name, ErrorBdev.Injection injection) {
        throw ControlException.invalid("the " + name() + " engine has no error bdevs");
    }

    /** Stops every injection of error bdev {@code name}. */
    default void clearErrors(String name) {
        throw ControlException.invalid("the " + name() + " engine has no error bdevs");
    }

    /** The injections active on error bdev {@code name}. */
    default List<ErrorBdev.Injection> errorInjections(String name) {
        throw ControlException.invalid("the " + name() + " engine has no error bdevs");
    }

    // ------------------------------------------------------------------ subsystems, namespaces, hosts

    SubsystemConfig addSubsystem(SubsystemConfig s);

    void removeSubsystem(String nqn);

    void setAllowAnyHost(String nqn, boolean allow);

    /** Adds a namespace (nsid 0 picks the lowest free one); connected hosts get the changed-namespace AEN. */
    NamespaceConfig addNamespace(String nqn, NamespaceConfig n);

    void removeNamespace(String nqn, int nsid);

    void addHost(String nqn, String hostnqn);

    /**
     * Allows a host that must authenticate with DH-HMAC-CHAP using the key files {@code keys} names ({@code keys}
     * null: as {@link #addHost(String, String)}). Engines without in-band authentication refuse keys.
     */
    default void addHost(String nqn, String hostnqn, HostKeyConfig keys) {
        if (keys != null) {
            throw ControlException.invalid("DH-HMAC-CHAP authentication (dhchapKey) is not supported by the " + name()
                + " engine yet; use engine java");
        }
        addHost(nqn, hostnqn);
    }

    /** Disallows a host; its controllers on this subsystem are disconnected. */
    void removeHost(String nqn, String hostnqn);

    /**
     * Gives host {@code keys.host} the TLS PSK {@code keys.tlsKey} for the discovery subsystem (a host that discovers
     * over TLS offers an identity naming the discovery NQN). Conflict when that host has one already.
     */
    default void addDiscoveryHostKey(HostKeyConfig keys) {
        throw ControlException.invalid(capabilities().refusal(EngineCapabilities.Feature.DISCOVERY_HOST_KEYS));
    }

    /** Takes a host's TLS PSK off the discovery subsystem (not found when it has none). */
    default void removeDiscoveryHostKey(String hostnqn) {
        throw ControlException.notFound("host " + hostnqn + " has no key on the discovery subsystem");
    }

    /**
     * Makes masked namespace {@code nsid} visible to {@code hostnqn} (per-host masking); that host's controllers get
     * the changed-namespace AEN. Invalid for a namespace without a hosts list, conflict when the host sees it.
     */
    void addNamespaceHost(String nqn, int nsid, String hostnqn);

    /** Masks namespace {@code nsid} from {@code hostnqn}; that host's controllers get the changed-namespace AEN. */
    void removeNamespaceHost(String nqn, int nsid, String hostnqn);

    // ------------------------------------------------------------------ listeners and referrals

    void addListener(String nqn, ListenerConfig l);

    /** Removes a listener from a subsystem; hosts connected through it are disconnected. */
    void removeListener(String nqn, ListenerConfig l);

    /**
     * Checks, changing nothing, that a listener not bound yet could be bound now (conflict if not): an import
     * probes every new listener before it removes anything.
     */
    void probeListener(ListenerConfig l);

    /** Listener as configured → address actually bound (differs when the configured port is 0). */
    Map<ListenerConfig, InetSocketAddress> listeners();

    /**
     * Every listener of the document (each once, in document order) → whether it serves: listening with its
     * bound port, or failed with the cause (a transport this host cannot run, such as rdma without a device).
     */
    Map<ListenerConfig, ListenerState> listenerStates();

    void addReferral(ReferralConfig r);

    void removeReferral(ReferralConfig r);

    /**
     * Stores the settings that only take effect at the next start ({@code engine}, {@code cores},
     * {@code idleStrategy}, {@code tcp}, {@code rdma}, {@code spdk}, {@code api}) from {@code from}, after validating the
     * document with them.
     */
    void setStartupSettings(TargetConfig from);

    /**
     * A deep copy of the document as this engine started: its start-up settings ({@code engine}, {@code cores},
     * {@code idleStrategy}, {@code tcp}, {@code rdma}, {@code spdk}, {@code api}) are the ones in effect until the
     * next start, whatever {@link #setStartupSettings} stored since (a transport created later, at its first
     * listener, is built from these too).
     */
    TargetConfig startedWith();

    // ------------------------------------------------------------------ state and statistics

    /** Live controllers of a subsystem (the discovery NQN included); not found for an unknown NQN. */
    List<ControllerInfo> controllers(String nqn);

    /** Per-subsystem counts (the discovery subsystem included) for the metrics. */
    List<SubsystemStats> subsystemStats();

    /**
     * Seconds the data-path threads have spent working (not idle) since the engine started, summed over
     * them; never decreases (the metrics publish it as a counter).
     */
    double busySeconds();

    /**
     * The NQN of the subsystem a namespace reported by this engine's {@link io.nvmf4j.core.IoObserver}
     * belongs to, or null when it is no longer in one (metrics attach per-I/O counts through it).
     */
    String subsystemOf(Namespace ns);

    /**
     * Runs one change of the configuration (its control calls, the save and, when that fails, the undo) so that a
     * namespace removed and added again with the same NGUID within it keeps its persistent reservation and the
     * file it is kept in (a config import replaces a changed namespace that way); a namespace removed for good
     * loses them when the change ends. Engines that keep no reservations of their own just run it.
     */
    default <T> T keepingReservations(java.util.function.Supplier<T> change) {
        return change.get();
    }

    /**
     * The persistent reservation of a namespace (registrants, holder, type, PTPL), read-only; not found for an
     * unknown subsystem or nsid. Engines that cannot show it refuse (invalid).
     */
    default ReservationInfo reservation(String nqn, int nsid) {
        throw ControlException.invalid(capabilities().refusal(EngineCapabilities.Feature.RESERVATION_REPORT));
    }

    /**
     * The ANA groups of subsystem {@code nqn} through listener {@code l} with their states (ANA: each listener is a
     * path with its own states); not found for an unknown subsystem or listener. Engines without ANA refuse.
     */
    default List<AnaGroupInfo> anaGroups(String nqn, ListenerConfig l) {
        throw ControlException.invalid("the " + name() + " engine has no ANA states (asymmetric namespace access is "
            + "java engine only)");
    }

    /**
     * Sets ANA group {@code group}'s state through listener {@code l} ({@code optimized}, {@code non-optimized},
     * {@code inaccessible}, {@code persistent-loss}, {@code change}); kept in the listener's {@code anaStates}. Hosts
     * connected through that listener get the ANA change event. Invalid for a bad group id or state name.
     */
    default void setAnaState(String nqn, ListenerConfig l, int group, String state) {
        throw ControlException.invalid("the " + name() + " engine has no ANA states (asymmetric namespace access is "
            + "java engine only)");
    }

    /** Disconnects every host, stops the data path, flushes and closes the block devices. */
    @Override
    void close();
}
