package io.nvmf4j.javaengine;

import io.nvmf4j.bdev.BlockDevice;
import io.nvmf4j.bdev.ErrorBdev;
import io.nvmf4j.bdev.RbdBdev;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.core.Reservation;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.core.Target;
import io.nvmf4j.engine.RbdCounters;
import io.nvmf4j.nvme.AnaState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * The java engine's policy for an rbd image served through several targets (gateways): which gateway holds the
 * image's exclusive lock (the one whose ANA group for the namespace is optimized), what the hosts see while a gateway
 * is blocklisted and after it reconnected (ANA limits), and the reservation the gateways share through the image's
 * header ({@link ReservationMetadata}). The engine calls it where a namespace, an ANA group or a state changes; the
 * bdev's reconnect thread calls it when its health changes.
 */
final class RbdGatewayPolicy {
    /** The rbd bdevs' process-wide counts ({@link RbdBdev}'s totals). */
    static final RbdCounters COUNTERS = new RbdCounters() {
        @Override
        public long blocklisted() {
            return RbdBdev.blocklistedTotal();
        }

        @Override
        public long reconnected() {
            return RbdBdev.reconnectedTotal();
        }

        @Override
        public long rewatchFailures() {
            return RbdBdev.rewatchFailuresTotal();
        }
    };

    private static final Logger LOG = LoggerFactory.getLogger(RbdGatewayPolicy.class);

    private final Target target;
    /** The document as its control layer committed it. */
    private final Supplier<TargetConfig> document;
    /** The engine's open bdevs by name (read under the engine's monitor, as the engine's own calls are). */
    private final Map<String, BlockDevice> bdevs;

    RbdGatewayPolicy(Target target, Supplier<TargetConfig> document, Map<String, BlockDevice> bdevs) {
        this.target = target;
        this.document = document;
        this.bdevs = bdevs;
    }

    /**
     * Holds the exclusive lock of every image of an rbd bdev with {@code exclusiveLock} whose namespace's ANA group is
     * optimized through a listener of {@code sc} on this target, and gives up the others' (BdevConfig#exclusiveLock).
     * At start a lock another live gateway holds is not taken (a restart never steals it): the namespace's ANA groups
     * here are at most non-optimized until a state is set for them through the API; later such a lock refuses the
     * change (RbdBdev.LockHeldElsewhere).
     */
    void syncExclusiveLocks(SubsystemConfig sc, boolean atStart) throws IOException {
        Subsystem live = target.subsystem(sc.nqn);
        for (NamespaceConfig n : sc.namespaces) {
            BdevConfig bc = document.get().bdevs.stream().filter(b -> b.name.equals(n.bdev)).findFirst().orElse(null);
            if (bc == null || !bc.exclusiveLockOrDefault() || !(bdevs.get(n.bdev) instanceof RbdBdev rbd)) {
                continue;
            }
            int group = n.anaGroupOrDefault();
            boolean optimized = false;
            for (ListenerConfig l : sc.listeners) {
                optimized |= live.anaPort(l).state(group) == AnaState.OPTIMIZED;
            }
            if (optimized && atStart) {
                try {
                    rbd.acquireExclusiveLock();
                } catch (RbdBdev.LockHeldElsewhere e) {
                    LOG.warn("{}; serving it non-optimized", e.getMessage());
                    limitGroupsOf(rbd, AnaState.NON_OPTIMIZED, "its exclusive lock is another live gateway's");
                }
            } else if (optimized) {
                rbd.acquireExclusiveLock();
            } else {
                rbd.releaseExclusiveLock();
            }
        }
    }

    /**
     * Sets the state of ANA group {@code group} through listener {@code l} of subsystem {@code sc} to {@code state},
     * ends the non-optimized limit a reconnect (or a lock another gateway held at start) put on the group on every
     * listener (the operator has decided), and takes or gives up the exclusive locks as the group's states now ask.
     * When a lock cannot be taken, states and limits are as they were and the exception says why. The listeners other
     * than {@code l} whose state changed (their hosts get the ANA change event).
     */
    List<ListenerConfig> setAnaState(SubsystemConfig sc, ListenerConfig l, int group, AnaState state)
        throws IOException {
        Subsystem live = target.subsystem(sc.nqn);
        AnaState configured = live.anaPort(l).configured(group);
        List<ListenerConfig> lifted = new ArrayList<>();
        List<ListenerConfig> changed = new ArrayList<>();
        for (ListenerConfig x : live.listeners()) {
            if (live.anaPort(x).limit(group) == AnaState.NON_OPTIMIZED) {
                if (live.anaPort(x).limit(group, AnaState.OPTIMIZED) && !x.equals(l)) {
                    changed.add(x);
                }
                lifted.add(x);
            }
        }
        if (live.anaPort(l).set(group, state) || !lifted.isEmpty()) {
            try {
                syncExclusiveLocks(sc, false);
            } catch (IOException e) {
                live.anaPort(l).set(group, configured);
                lifted.forEach(x -> live.anaPort(x).limit(group, AnaState.NON_OPTIMIZED));
                throw e;
            }
        }
        return changed;
    }

    /**
     * Follows an rbd bdev's health: while Ceph has blocklisted its client (another gateway broke its exclusive lock)
     * the ANA groups of its namespaces are inaccessible on every listener here, and once it has reconnected they are
     * at most non-optimized when the bdev has {@code exclusiveLock} (the lock is another gateway's now: this one does
     * not take it back by itself, so two gateways never break each other's lock in turn) until the next state set
     * for the group through the API ({@link #setAnaState}); without it they are as configured again. Hosts get the
     * ANA change event. Returns {@code d}.
     */
    BlockDevice watchHealth(BdevConfig c, BlockDevice d) {
        if (d instanceof RbdBdev rbd) {
            boolean exclusiveLock = c.exclusiveLockOrDefault();
            rbd.onHealth(h -> limitGroupsOf(rbd, h == RbdBdev.Health.FENCED ? AnaState.INACCESSIBLE
                : exclusiveLock ? AnaState.NON_OPTIMIZED : AnaState.OPTIMIZED));
        }
        return d;
    }

    /**
     * Limits the ANA groups of the namespaces on {@code bdev} to {@code limit} on every listener of their subsystems
     * and tells the hosts whose state changed. The reconnect thread of the bdev; takes no lock of the engine.
     */
    private void limitGroupsOf(BlockDevice bdev, AnaState limit) {
        limitGroupsOf(bdev, limit, limit == AnaState.INACCESSIBLE ? "blocklisted, reconnecting" : "reconnected");
    }

    private void limitGroupsOf(BlockDevice bdev, AnaState limit, String why) {
        for (Subsystem s : target.nvmSubsystems()) {
            Set<Integer> groups = new TreeSet<>();
            for (Namespace ns : s.namespaces()) {
                if (ns.bdev() == bdev) {
                    groups.add(ns.anaGroup());
                }
            }
            for (int g : groups) {
                for (ListenerConfig l : s.listeners()) {
                    if (s.anaPort(l).limit(g, limit)) {
                        LOG.warn("subsystem {}: ANA group {} is {} through listener {} (bdev {}: {})", s.nqn(), g,
                            s.anaPort(l).state(g).configName(), l, bdev.name(), why);
                        s.anaChanged(l);
                    }
                }
            }
        }
    }

    /**
     * Whether a namespace on {@code bdev} with {@code reservations: shared} keeps its reservation in the image, shared
     * with every target serving it: an rbd bdev (under an error bdev too). Else the engine keeps it itself.
     */
    static boolean sharesReservations(BlockDevice bdev) {
        return image(bdev) instanceof RbdBdev;
    }

    /** The reservation of a namespace on {@code bdev} (see {@link #sharesReservations}), kept in the image's header. */
    static Reservation sharedReservation(BlockDevice bdev) throws IOException {
        return ReservationMetadata.open((RbdBdev) image(bdev));
    }

    private static BlockDevice image(BlockDevice bdev) {
        return bdev instanceof ErrorBdev wrapper ? wrapper.base() : bdev;
    }
}
