package io.nvmf4j.spdk;

import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.PoolRules;
import io.nvmf4j.spdk.SpdkPools.Lvol;
import io.nvmf4j.spdk.SpdkPools.StoreInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The lvols of a pool's store that the document does not name, at start. One of the pool's naming is a change never
 * committed (a create, clone or snapshot made in SPDK before a kill -9 took the service ahead of the document's
 * commit) and is deleted, dependents before what they depend on; any other is kept and logged, as the pool's API
 * could not have made it. Of the pool's naming ({@link #notOfTheNaming}) are exactly what the calls make:
 * <ul>
 *   <li>an lvol that is not a snapshot, named by the volume-name rule ({@link PoolRules#nameProblem}): what a create
 *   or a clone makes;</li>
 *   <li>a snapshot lvol named {@code <volume>@<snapshot>} whose volume is one of the document's and whose snapshot
 *   part follows the same rule: what a snapshot or group snapshot of that volume makes.</li>
 * </ul>
 *
 * <p>SPDK's lineage decides the order: an lvol is deleted once no other lvol to delete depends on it, so an
 * uncommitted clone goes before its snapshot. Deleting a snapshot that one lvol depends on merges it into that lvol
 * (SPDK moves the snapshot's clusters the lvol has not written into it), so a volume whose uncommitted snapshot goes
 * keeps its data; a snapshot more lvols depend on is kept (SPDK refuses to delete it), and so is one SPDK refuses.
 */
final class UncommittedLvols {
    private static final Logger LOG = LoggerFactory.getLogger(UncommittedLvols.class);

    /** The lvols deleted and those kept (not of the pool's naming, or not deletable), by name. */
    record Outcome(List<String> removed, List<String> kept) {
    }

    private UncommittedLvols() {
    }

    /**
     * Deletes from pool {@code p}'s store (as {@code store} lists it) the lvols of its naming that {@code named} (the
     * document's lvols) lacks, and keeps the others; each is logged with what it was.
     */
    static Outcome reconcile(PoolConfig p, StoreInfo store, Set<String> named) {
        List<String> pending = new ArrayList<>();
        List<String> kept = new ArrayList<>();
        for (Lvol l : store.lvols().values()) {
            if (named.contains(l.name())) {
                continue;
            }
            String why = notOfTheNaming(p, l);
            if (why == null) {
                pending.add(l.name());
            } else {
                LOG.warn("pool {}: lvol {} ({}) is not of the pool's naming ({}); kept", p.name, l.name(),
                    describe(l, store), why);
                kept.add(l.name());
            }
        }
        Map<String, Lvol> left = new LinkedHashMap<>(store.lvols());
        List<String> removed = new ArrayList<>();
        while (!pending.isEmpty()) {
            Lvol next = pending.stream().map(left::get)
                .filter(l -> dependents(left, l).stream().map(Lvol::name).noneMatch(pending::contains))
                .findFirst().orElseThrow(); // SPDK's lineage is a forest: some pending lvol has no pending dependent
            pending.remove(next.name());
            List<Lvol> dependents = dependents(left, next);
            if (delete(p, store, next, dependents)) {
                left.remove(next.name());
                // SPDK's merge: the dependent now depends on what the deleted snapshot depended on
                dependents.forEach(d -> left.put(d.name(), d.withParent(next.parent())));
                removed.add(next.name());
            } else {
                kept.add(next.name());
            }
        }
        return new Outcome(removed, kept);
    }

    /**
     * Null when lvol {@code l} is of pool {@code p}'s naming (see the class comment), else why not.
     */
    static String notOfTheNaming(PoolConfig p, Lvol l) {
        int at = l.name().indexOf('@');
        if (at < 0) {
            if (PoolRules.nameProblem(l.name(), "name") != null) {
                return "not a volume name: " + PoolRules.NAME_RULE;
            }
            return l.snapshot() ? "a snapshot not named <volume>@<snapshot>" : null;
        }
        String volume = l.name().substring(0, at);
        if (p.volume(volume) == null) {
            return "the configuration has no volume '" + volume + "'";
        }
        if (PoolRules.nameProblem(l.name().substring(at + 1), "snapshot") != null) {
            return "not a snapshot name after '@': " + PoolRules.NAME_RULE;
        }
        return l.snapshot() ? null : "named as a snapshot but not one";
    }

    /** Deletes {@code l}, on which {@code dependents} depend; whether it is gone (else logged why not). */
    private static boolean delete(PoolConfig p, StoreInfo store, Lvol l, List<Lvol> dependents) {
        String what = describe(l, store);
        if (dependents.size() > 1) {
            LOG.error("pool {}: lvol {} ({}) is not named by the configuration but kept: {} depend on it, and SPDK"
                + " deletes a snapshot only with at most one", p.name, l.name(), what, names(dependents));
            return false;
        }
        String merge = dependents.isEmpty() ? "" : ", merged into " + dependents.get(0).name() + " which depends on it";
        try {
            SpdkNative.lvol(SpdkNative.LVOL_DESTROY, p.name, l.name(), null, 0, true);
        } catch (SpdkException e) {
            LOG.error("pool {}: lvol {} ({}) is not named by the configuration but kept: SPDK did not delete it: {}",
                p.name, l.name(), what, e.getMessage());
            return false;
        }
        LOG.warn("pool {}: removed lvol {} ({}){}: the configuration does not name it (a create, clone or snapshot"
            + " never committed)", p.name, l.name(), what, merge);
        return true;
    }

    /** The lvols of {@code lvols} that depend on {@code l} (whose parent it is). */
    private static List<Lvol> dependents(Map<String, Lvol> lvols, Lvol l) {
        return lvols.values().stream().filter(d -> l.name().equals(d.parent())).toList();
    }

    private static List<String> names(List<Lvol> lvols) {
        return lvols.stream().map(Lvol::name).toList();
    }

    /** What lvol {@code l} is: kind, size, allocated bytes and parent. */
    static String describe(Lvol l, StoreInfo store) {
        return (l.snapshot() ? "snapshot" : l.thin() ? "thin" : "thick") + ", " + l.clusters() * store.clusterBytes()
            + " bytes, " + l.allocatedClusters() * store.clusterBytes() + " allocated, "
            + (l.parent() == null ? "no parent" : "parent " + l.parent());
    }
}
