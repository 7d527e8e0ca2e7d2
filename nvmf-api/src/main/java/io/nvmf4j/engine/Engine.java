package io.nvmf4j.engine;

import io.nvmf4j.ControlException;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.EngineCapabilities;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.VolumeConfig;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * The data plane under the control layer ({@link ConfigController}): block devices, subsystems with their namespaces,
 * hosts and listeners, referrals, ANA states and statistics, as one engine runs them ({@code java}: our own data path;
 * {@code spdk}: SPDK's target). One engine per process, started by its {@link EngineProvider} from a validated
 * document that its {@link ConfigController} owns from then on.
 *
 * <p>The controller calls a change only after it has checked it against the whole document; {@code next} is the
 * document with the change applied, which the controller keeps once the call returns. An engine refuses what its
 * data path cannot do with a {@link ControlException} (invalid → 400, not found → 404, conflict → 409) and is then
 * as it was. The controller calls holding this engine's monitor; an engine's own threads take the same monitor to
 * read the live document ({@link LiveDocument}).
 */
public interface Engine extends AutoCloseable {
    /** The configuration name of this engine ({@code java}, {@code spdk}). */
    String name();

    /** What this engine can do, as registered for its name ({@link EngineCapabilities}). */
    default EngineCapabilities capabilities() {
        return EngineCapabilities.of(name());
    }

    // ------------------------------------------------------------------ bdevs

    /** Opens bdev {@code b} of {@code next} (with {@code next}'s storage rules). */
    void addBdev(TargetConfig next, BdevConfig b);

    /** Closes bdev {@code b}, which backs no namespace; conflict while removed namespaces still run commands on it. */
    void removeBdev(BdevConfig b);

    /** Grows bdev {@code b} to {@code numBlocks}; every namespace on it reports the new size. Never shrinks. */
    void growBdev(TargetConfig doc, BdevConfig b, long numBlocks);

    /**
     * Makes error bdev {@code name} fail commands as {@code injection} says (an error bdev, {@code "kind": "error"}); not found for an
     * unknown bdev, invalid for one that is not an error bdev or a bad injection. Called on engines whose
     * {@link EngineCapabilities#bdevTypes} hold {@code error} only.
     */
    default void injectError(String name, ErrorInjection injection) {
        throw new UnsupportedOperationException("error bdevs");
    }

    /** Stops every injection of error bdev {@code name}. */
    default void clearErrors(String name) {
        throw new UnsupportedOperationException("error bdevs");
    }

    /** The injections active on error bdev {@code name}. */
    default List<ErrorInjection> errorInjections(String name) {
        throw new UnsupportedOperationException("error bdevs");
    }

    // ------------------------------------------------------------------ pools and volumes
    //
    // Called on engines whose EngineCapabilities#poolKinds hold the pool's kind only (the controller refuses the
    // others with the engine's reason). Every call leaves nothing behind when it fails. A file the engine makes for a
    // change is named so that one left by a change never committed is found and removed at the next start.

    /** Opens pool {@code p} of {@code next}: refused (invalid) when its medium cannot hold a pool of its kind. */
    default void addPool(TargetConfig next, PoolConfig p) {
        throw new UnsupportedOperationException("pools");
    }

    /** Closes pool {@code p}, which holds no volume. */
    default void removePool(PoolConfig p) {
        throw new UnsupportedOperationException("pools");
    }

    /** Pool {@code pool}'s capacity now (checks its warning watermark). */
    default PoolInfo poolInfo(PoolConfig pool) {
        throw new UnsupportedOperationException("pools");
    }

    /** Makes volume {@code v} of pool {@code pool} of {@code next} and opens it as bdev {@code <pool>/<volume>}. */
    default void createVolume(TargetConfig next, String pool, VolumeConfig v) {
        throw new UnsupportedOperationException("pools");
    }

    /**
     * Sets volume {@code volume}'s size to {@code numBlocks}: a grow is live (every namespace on it reports the new size,
     * changed-namespace AEN); a shrink comes only for a volume no namespace uses.
     */
    default void resizeVolume(TargetConfig next, String pool, VolumeConfig volume, long numBlocks) {
        throw new UnsupportedOperationException("pools");
    }

    /**
     * Closes volume {@code volume} (no namespace uses it, no snapshot left) and deletes it: its file is gone for good
     * at the next {@link #settle}.
     */
    default void deleteVolume(String pool, String volume) {
        throw new UnsupportedOperationException("pools");
    }

    /**
     * Takes snapshot {@code snapshot} of each of {@code volumes} at one instant: writes to their namespaces held, the
     * ones in flight completed, the data synced, the copies made, writes resumed. Returns the pause in nanoseconds
     * (0 when no namespace used them).
     */
    default long snapshot(String pool, List<String> volumes, String snapshot) {
        throw new UnsupportedOperationException("pools");
    }

    /** Makes volume {@code clone} of {@code next} from snapshot {@code snapshot} of {@code volume}, and opens it. */
    default void cloneSnapshot(TargetConfig next, String pool, String volume, String snapshot, VolumeConfig clone) {
        throw new UnsupportedOperationException("pools");
    }

    /** Deletes snapshot {@code snapshot} of {@code volume} (no clone names it). */
    default void deleteSnapshot(String pool, String volume, String snapshot) {
        throw new UnsupportedOperationException("pools");
    }

    // The undo of a change whose document could not be saved (ConfigController#commit): each takes back one step
    // above, leaving the pool's files and open volumes as they were before it.

    /** Closes volume {@code volume} made by a create or clone that is taken back, and removes its file now. */
    default void discardVolume(String pool, String volume) {
        throw new UnsupportedOperationException("pools");
    }

    /** Brings back volume {@code v} of {@code pool}, deleted by a delete that is taken back, and opens it again. */
    default void restoreVolume(String pool, VolumeConfig v) {
        throw new UnsupportedOperationException("pools");
    }

    /** Removes snapshot {@code snapshot} of each of {@code volumes}, taken by a snapshot that is taken back. */
    default void discardSnapshots(String pool, List<String> volumes, String snapshot) {
        throw new UnsupportedOperationException("pools");
    }

    /** Brings back snapshot {@code snapshot} of {@code volume}, deleted by a delete that is taken back. */
    default void restoreSnapshot(String pool, String volume, String snapshot) {
        throw new UnsupportedOperationException("pools");
    }

    /** Bytes volume {@code volume} (snapshot {@code snapshot}, when not null) occupies on its pool's medium. */
    default long allocatedBytes(String pool, String volume, String snapshot) {
        throw new UnsupportedOperationException("pools");
    }

    /**
     * The volumes and snapshots the start found missing from their pools, which the engine does not open and whose
     * namespaces it does not serve ({@link MissingVolumes}: the rule every engine follows). Engines without pools:
     * none.
     */
    default MissingVolumes missingVolumes() {
        return new MissingVolumes();
    }

    /**
     * The committed document is durable: frees what deletes committed before it left (their files stay, renamed,
     * until then, so a change whose save fails can still be undone). Engines without pools have nothing to do.
     */
    default void settle() {
    }

    // ------------------------------------------------------------------ subsystems, namespaces, hosts

    /** Builds subsystem {@code added} of {@code next}, with its namespaces, hosts and listeners. */
    void addSubsystem(TargetConfig next, SubsystemConfig added);

    /** Takes subsystem {@code removed} away; {@code next} no longer has it (its listeners no one else uses stop). */
    void removeSubsystem(TargetConfig next, SubsystemConfig removed);

    /** Allows any host on {@code sc} or only its list; hosts no longer allowed are disconnected. */
    void setAllowAnyHost(SubsystemConfig sc, boolean allow);

    /** Adds namespace {@code added} of subsystem {@code nqn} of {@code next}; connected hosts get the changed-namespace AEN. */
    void addNamespace(TargetConfig next, String nqn, NamespaceConfig added);

    void removeNamespace(String nqn, int nsid);

    /**
     * Applies the QoS of {@code doc} (namespaces' {@code qos}, subsystems' per-host {@code qos}, {@code qosGroups}) to
     * the I/O from now on; the document was validated against this engine's capabilities. Refused (invalid) when the
     * engine cannot.
     */
    default void applyQos(TargetConfig doc) {
        throw io.nvmf4j.ControlException.invalid(capabilities().refusal(
            io.nvmf4j.config.EngineCapabilities.Feature.QOS_NAMESPACE));
    }

    /**
     * Moves namespace {@code nsid} of {@code nqn} to ANA group {@code group} ({@code next}: the document with it
     * there): from then on the ANA log page (0Ch) lists it in that group and its I/O takes that group's state
     * through each listener; the connected hosts are told (an asynchronous event).
     */
    void setNamespaceAnaGroup(TargetConfig next, String nqn, int nsid, int group);

    /**
     * Allows {@code hostnqn} on {@code nqn}, authenticating with {@code keys} (null: none); {@code before} is the key
     * entry it had already ({@code allowAnyHost} let it in with keys), or null.
     */
    void addHost(String nqn, String hostnqn, HostKeyConfig keys, HostKeyConfig before);

    /** Disallows a host of {@code sc} (not changed yet); its controllers on this subsystem are disconnected. */
    void removeHost(SubsystemConfig sc, String hostnqn);

    /** Gives host {@code keys.host} the TLS PSK {@code keys.tlsKey} for the discovery subsystem. */
    default void addDiscoveryHostKey(HostKeyConfig keys) {
        throw new UnsupportedOperationException("discovery host keys");
    }

    /** Takes a host's TLS PSK off the discovery subsystem; its discovery controllers are disconnected. */
    default void removeDiscoveryHostKey(String hostnqn) {
        throw new UnsupportedOperationException("discovery host keys");
    }

    /**
     * Makes masked namespace {@code nsid} visible to {@code hostnqn} ({@code add}) or masks it, {@code hosts} being its
     * list after the change; that host's controllers get the changed-namespace AEN.
     */
    void setNamespaceHost(String nqn, int nsid, String hostnqn, boolean add, List<String> hosts);

    // ------------------------------------------------------------------ listeners and referrals

    /** Adds listener {@code l} of {@code next} to subsystem {@code nqn}, listening on it first when no one does. */
    void addListener(TargetConfig next, String nqn, ListenerConfig l);

    /**
     * Removes a listener from a subsystem; hosts connected through it are disconnected, and it stops listening when no
     * subsystem of {@code next} lists it.
     */
    void removeListener(TargetConfig next, String nqn, ListenerConfig l);

    /**
     * Checks, changing nothing, that a listener not bound yet could be bound now (conflict if not): an import
     * probes every new listener before it removes anything.
     */
    void probeListener(ListenerConfig l);

    /** Listener as configured → address actually bound (differs when the configured port is 0). */
    Map<ListenerConfig, InetSocketAddress> listeners();

    /** Listeners whose transport cannot run here (kept configured, not advertised, not bound) → why. */
    Map<ListenerConfig, String> failedListeners();

    /** Advertises the referrals of {@code next} (one added). */
    void addReferral(TargetConfig next, ReferralConfig r);

    /** Advertises the referrals of {@code next} (one removed). */
    void removeReferral(TargetConfig next, ReferralConfig r);

    /** The state of each ANA group of subsystem {@code nqn} through listener {@code l} (as configured), by group id. */
    IntFunction<String> anaStates(String nqn, ListenerConfig l);

    /**
     * Sets ANA group {@code group}'s state through listener {@code l}; hosts connected through that listener get the
     * ANA change event.
     */
    void setAnaState(String nqn, ListenerConfig l, int group, String state);

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
     * The NQN of the subsystem a namespace reported by this engine's {@link IoObserver} belongs to, or null when it
     * is no longer in one (metrics attach per-I/O counts through it).
     */
    String subsystemOf(IoNamespace ns);

    /**
     * The statistics of an engine that counts its own data path and sends no per-I/O {@link IoObserver} events
     * (metrics read them at each scrape instead), or null for an engine that sends those events.
     */
    default EngineIoStats ownIoStats() {
        return null;
    }

    /** The counts of this engine's rbd bdevs' recoveries from Ceph faults, or null where it has no rbd bdevs. */
    default RbdCounters rbdCounters() {
        return null;
    }

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
     * The persistent reservation of namespace {@code nsid} of subsystem {@code nqn}; not found for an unknown nsid.
     * Called on engines with {@link EngineCapabilities.Feature#RESERVATION_REPORT} only.
     */
    default ReservationInfo reservation(String nqn, int nsid) {
        throw new UnsupportedOperationException("reservation report");
    }

    /** Disconnects every host, stops the data path, flushes and closes the block devices. */
    @Override
    void close();
}
