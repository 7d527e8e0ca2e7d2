package io.nvmf4j.core;

import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CopyOnWriteArraySet;

/**
 * An NVM subsystem (or the discovery subsystem): identity, namespaces, allowed hosts, the listeners
 * it is reachable on and its live controllers.
 *
 * <p>Namespaces are an array indexed by nsid - 1 that is replaced as a whole on change, so the I/O
 * path reads it without a lock.
 */
public final class Subsystem {
    public static final String DISCOVERY_NQN = io.nvmf4j.config.Nqn.DISCOVERY;

    private final String nqn;
    private final boolean discovery;
    private final String serial;
    private final String model;
    private final String firmware;
    private final int maxNamespaces;
    private final int minCntlid;
    private final int maxCntlid;
    private volatile boolean allowAnyHost;
    private final Set<String> hosts = new CopyOnWriteArraySet<>();
    /** DH-HMAC-CHAP key files by host NQN: a host listed here must authenticate. */
    private final Map<String, HostKeyConfig> hostKeys = new ConcurrentHashMap<>();
    private final List<ListenerConfig> listeners = new CopyOnWriteArrayList<>();
    private volatile Namespace[] namespaces;
    private final ConcurrentHashMap<Integer, Controller> controllers = new ConcurrentHashMap<>();
    /**
     * Controllers torn down whose device commands may still run (Controller#destroy, DeviceQuiesce): their cntlids
     * stay taken, and a new controller of their host waits ({@link #whenQuiesced}); under the monitor.
     */
    private final Map<Integer, Controller> quiescing = new java.util.HashMap<>();
    /** Admin Connects waiting for their host's quiescing controllers; under the monitor. */
    private final List<QuiesceWaiter> quiesceWaiters = new ArrayList<>();
    /** ANA states by listener (a listener not set up yet reports every group optimized). */
    private final ConcurrentHashMap<ListenerConfig, AnaPort> anaPorts = new ConcurrentHashMap<>();
    private int nextCntlid;
    private boolean removed;

    public Subsystem(String nqn, boolean discovery, String serial, String model, String firmware, int maxNamespaces,
                     int minCntlid, int maxCntlid, boolean allowAnyHost) {
        this.nqn = nqn;
        this.discovery = discovery;
        this.serial = serial;
        this.model = model;
        this.firmware = firmware;
        this.maxNamespaces = maxNamespaces;
        this.minCntlid = minCntlid;
        this.maxCntlid = maxCntlid;
        this.allowAnyHost = allowAnyHost;
        this.namespaces = new Namespace[maxNamespaces];
        this.nextCntlid = minCntlid;
    }

    public String nqn() {
        return nqn;
    }

    public boolean isDiscovery() {
        return discovery;
    }

    public String serial() {
        return serial;
    }

    public String model() {
        return model;
    }

    public String firmware() {
        return firmware;
    }

    public int maxNamespaces() {
        return maxNamespaces;
    }

    public boolean allowAnyHost() {
        return allowAnyHost;
    }

    public void setAllowAnyHost(boolean allow) {
        this.allowAnyHost = allow;
    }

    public Set<String> hosts() {
        return hosts;
    }

    /** The key files of {@code hostnqn}, or null when it does not authenticate. */
    public HostKeyConfig hostKey(String hostnqn) {
        return hostKeys.get(hostnqn);
    }

    /** Sets (or with null removes) the key files of {@code hostnqn}; the next authentication uses them. */
    public void setHostKey(String hostnqn, HostKeyConfig keys) {
        if (keys == null) {
            hostKeys.remove(hostnqn);
        } else {
            hostKeys.put(hostnqn, keys);
        }
    }

    public boolean allowsHost(String hostnqn) {
        return allowAnyHost || hosts.contains(hostnqn);
    }

    public List<ListenerConfig> listeners() {
        return listeners;
    }

    /** The discovery subsystem is reachable on every listener; others only on their own. */
    public boolean reachableVia(ListenerConfig listener) {
        return discovery || listeners.contains(listener);
    }

    /** The ANA states of this subsystem on {@code listener} (created, all optimized, at first use). */
    public AnaPort anaPort(ListenerConfig listener) {
        return anaPorts.computeIfAbsent(listener, l -> new AnaPort());
    }

    /** The ANA change event to the controllers connected through {@code listener}. */
    public void anaChanged(ListenerConfig listener) {
        for (Controller c : controllers.values()) {
            if (listener.equals(c.adminQueue().listener())) {
                c.anaChanged();
            }
        }
    }

    /** Forgets the ANA states of a listener that was removed. */
    public void removeAnaPort(ListenerConfig listener) {
        anaPorts.remove(listener);
    }

    /** The namespace with this nsid, or null (also for 0, broadcast and out-of-range values). */
    public Namespace namespace(int nsid) {
        Namespace[] ns = namespaces;
        if (nsid <= 0 || nsid > ns.length) {
            return null;
        }
        return ns[nsid - 1];
    }

    /**
     * The namespace with this nsid as the host {@code hostnqn} sees it: null also when it is masked from that host
     * (an inactive nsid for it). Allocation-free (the I/O path asks).
     */
    public Namespace namespace(int nsid, String hostnqn) {
        Namespace ns = namespace(nsid);
        return ns != null && ns.visibleTo(hostnqn) ? ns : null;
    }

    /** The namespaces active for host {@code hostnqn}, in nsid order. */
    public List<Namespace> namespaces(String hostnqn) {
        List<Namespace> out = new ArrayList<>();
        for (Namespace n : namespaces) {
            if (n != null && n.visibleTo(hostnqn)) {
                out.add(n);
            }
        }
        return out;
    }

    /** Active namespaces in nsid order. */
    public List<Namespace> namespaces() {
        List<Namespace> out = new ArrayList<>();
        for (Namespace n : namespaces) {
            if (n != null) {
                out.add(n);
            }
        }
        return out;
    }

    public synchronized void addNamespace(Namespace ns) {
        if (ns.nsid() < 1 || ns.nsid() > maxNamespaces) {
            throw new IllegalArgumentException("nsid " + ns.nsid() + " outside 1.." + maxNamespaces);
        }
        Namespace[] copy = namespaces.clone();
        if (copy[ns.nsid() - 1] != null) {
            throw new IllegalArgumentException("nsid " + ns.nsid() + " already in use in " + nqn);
        }
        copy[ns.nsid() - 1] = ns;
        namespaces = copy;
        countAnaChange();
    }

    /** The ANA log changes on every listener (a namespace joined or left a group). */
    private void countAnaChange() {
        anaPorts.values().forEach(AnaPort::countChange);
    }

    public synchronized Namespace removeNamespace(int nsid) {
        Namespace[] copy = namespaces.clone();
        Namespace old = copy[nsid - 1];
        copy[nsid - 1] = null;
        namespaces = copy;
        countAnaChange();
        return old;
    }

    /** Allocates a cntlid and registers the controller; null when the range is exhausted. */
    public synchronized Controller createController(Controller.Factory factory) {
        if (removed) {
            return null;
        }
        int span = maxCntlid - minCntlid + 1;
        for (int i = 0; i < span; i++) {
            int cntlid = nextCntlid;
            nextCntlid = nextCntlid >= maxCntlid ? minCntlid : nextCntlid + 1;
            if (!controllers.containsKey(cntlid) && !quiescing.containsKey(cntlid)) {
                Controller c = factory.create(this, cntlid);
                controllers.put(cntlid, c);
                return c;
            }
        }
        return null;
    }

    /** The controller limit: every cntlid of minCntlid..maxCntlid, one per controller (as nvmet and SPDK). */
    public String cntlidRange() {
        return minCntlid + ".." + maxCntlid;
    }

    public Controller controller(int cntlid) {
        return controllers.get(cntlid);
    }

    public Collection<Controller> controllers() {
        return controllers.values();
    }

    /**
     * Tells every controller of each host a notice names (log page 80h and its event, unless that controller masked
     * the type for {@code nsid}); any thread.
     */
    public void reservationNotices(int nsid, List<Reservation.Notice> notices) {
        for (Reservation.Notice n : notices) {
            for (Controller c : controllers.values()) {
                if (c.isHost(n.hostHi(), n.hostLo())) {
                    c.reservationNotice(n.type(), nsid);
                }
            }
        }
    }

    /** Marks the subsystem gone: no new controller from now on (a Connect racing the removal fails). */
    public synchronized void markRemoved() {
        removed = true;
    }

    public synchronized boolean isRemoved() {
        return removed;
    }

    /** {@code c} is torn down: out of the live controllers, its cntlid kept until {@link #endQuiesce}. */
    synchronized void startQuiesce(Controller c) {
        if (controllers.remove(c.cntlid(), c)) {
            quiescing.put(c.cntlid(), c);
        }
    }

    /** {@code c}'s device commands ended (or its bound passed): its cntlid is free, its host's Connects go on. */
    void endQuiesce(Controller c) {
        List<QuiesceWaiter> ready = new ArrayList<>();
        synchronized (this) {
            quiescing.remove(c.cntlid(), c);
            for (java.util.Iterator<QuiesceWaiter> it = quiesceWaiters.iterator(); it.hasNext(); ) {
                QuiesceWaiter w = it.next();
                if (!quiescingHost(w.hostHi(), w.hostLo())) {
                    it.remove();
                    ready.add(w);
                }
            }
        }
        for (QuiesceWaiter w : ready) {
            try {
                w.executor().execute(w.then());
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // that Connect's poll group stopped: its queue is gone with it
            }
        }
    }

    /**
     * When a controller of host (hi, lo) is still quiescing: {@code then} runs on {@code executor} once none is,
     * and true is returned; else false (nothing waits; the caller goes on at once). A host's new controller so
     * never runs commands beside the old one's.
     */
    public synchronized boolean whenQuiesced(long hi, long lo, java.util.concurrent.Executor executor, Runnable then) {
        if (!quiescingHost(hi, lo)) {
            return false;
        }
        quiesceWaiters.add(new QuiesceWaiter(hi, lo, executor, then));
        return true;
    }

    private boolean quiescingHost(long hi, long lo) {
        for (Controller q : quiescing.values()) {
            if (q.isHost(hi, lo)) {
                return true;
            }
        }
        return false;
    }

    /** Controllers torn down whose device commands have not ended yet (their cntlids are still taken). */
    public synchronized List<Controller> quiescingControllers() {
        return new ArrayList<>(quiescing.values());
    }

    private record QuiesceWaiter(long hostHi, long hostLo, java.util.concurrent.Executor executor, Runnable then) {
    }

    @Override
    public String toString() {
        return nqn;
    }
}
