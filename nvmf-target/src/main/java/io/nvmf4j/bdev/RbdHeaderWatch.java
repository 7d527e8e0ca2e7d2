package io.nvmf4j.bdev;

import io.nvmf4j.bdev.RbdBdev.HeaderEvent;
import io.nvmf4j.bdev.RbdBdev.HeaderListener;
import io.nvmf4j.bdev.RbdBdev.Watcher;
import io.nvmf4j.bdev.RbdConnection.Conn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The state an rbd bdev keeps in its image's header object ({@code rbd_header.<id>}) and how the gateways serving the
 * image keep each other current about it: the image's metadata, read and compared-and-set on the OSD; the header
 * watch (rados_watch2), whose notifications reach the {@link HeaderListener}s and are acknowledged once each has
 * taken the change in; notify with the list of the watchers that did not answer, and the blocklist that fences such
 * a watcher. A broken watch is made again on a thread of its own ({@code rbd-rewatch-<name>}); a reconnect moves it
 * to the new client ({@link #leaveOldClient}, {@link #joinNewClient}).
 *
 * <p>This object's monitor serializes the watch's changes ({@code watch}, {@code watchConn}) and the first read of
 * the header's name; the watch callback never waits for it except to acknowledge, and it is never held across a
 * notify.
 */
final class RbdHeaderWatch {
    private static final Logger LOG = LoggerFactory.getLogger(RbdHeaderWatch.class);

    /** How many watchers of the header (and late answers to a notification) this gateway handles at most. */
    private static final int WATCHERS_MAX = 64;
    private static final LongAdder REWATCH_FAILURES = new LongAdder();
    /** First wait before a failed re-watch is tried again; it doubles up to {@link #REWATCH_MAX_DELAY_MS}. */
    static final long REWATCH_FIRST_DELAY_MS = 100;
    static final long REWATCH_MAX_DELAY_MS = 5_000;
    /**
     * How long the header may stay unwatched before that is logged as an error: Ceph's {@code osd_client_watch_timeout}
     * (30 s), the time another gateway's notify waits for a dead watcher; past it this gateway misses changes.
     */
    static final long REWATCH_ERROR_AFTER_MS = 30_000;

    private final String name;
    private final RbdBdev.Options options;
    private final RbdConnection connection;
    /** The tag of the watch's callbacks (RbdBdev#headerUpdated): the device's index. */
    private final int tag;
    /** Told when another client notifies the image's header (see {@link #watch}); any thread. */
    private final List<HeaderListener> listeners = new CopyOnWriteArrayList<>();
    /**
     * The image's header object, {@code rbd_header.<id>}; null until first needed (set under this, read without
     * it: the watch callback must not wait for a control call, which may itself wait for librbd's callbacks).
     */
    private volatile String oid;
    /** The header watch's handle, 0 when none. Guarded by this. */
    private long watch;
    /** The connection {@link #watch} was made on (its ioctx must outlive the watch). Guarded by this. */
    private Conn watchConn;

    RbdHeaderWatch(String name, RbdBdev.Options options, RbdConnection connection, int tag) {
        this.name = name;
        this.options = options;
        this.connection = connection;
        this.tag = tag;
    }

    // ------------------------------------------------------------------ metadata

    /** The value of the image's metadata {@code key}, or null when it has none. */
    byte[] metadata(String key) throws IOException {
        return metadata(key, 4096);
    }

    private byte[] metadata(String key, int size) throws IOException {
        byte[] out = new byte[size];
        int n = connection.withConn(c -> RbdNative.metadataGet(c.ioctx, oid(), key, out));
        if (n == -RbdNative.ENOENT) {
            return null;
        }
        if (n == -RbdNative.ERANGE && size < (1 << 24)) {
            return metadata(key, size * 4);
        }
        if (n < 0) {
            throw connection.failure("read metadata " + key + " of", n);
        }
        return Arrays.copyOf(out, n);
    }

    /** See RbdBdev#compareAndSetMetadata. */
    boolean compareAndSetMetadata(String key, byte[] expected, byte[] value) throws IOException {
        if (value.length == 0) {
            throw new IllegalArgumentException("an empty value cannot be told from an absent one");
        }
        int rc = connection.withConn(c -> RbdNative.metadataCas(c.ioctx, oid(), key, expected, value));
        if (rc == -RbdNative.ECANCELED) {
            return false;
        }
        if (rc < 0) {
            throw connection.failure("write metadata " + key + " of", rc);
        }
        return true;
    }

    /** A read of the header on {@code c} whose only use is its status: ESHUTDOWN tells a blocklisted client. */
    long probe(Conn c) throws IOException {
        return RbdNative.metadataGet(c.ioctx, oid(), "nvmf4j.probe", new byte[8]);
    }

    private String oid() throws IOException {
        String known = oid;
        if (known != null) {
            return known;
        }
        synchronized (this) {
            if (oid == null) {
                byte[] out = new byte[128];
                int n = RbdNative.headerOid(connection.current().image, out);
                if (n < 0) {
                    throw connection.failure("read the id of", n);
                }
                oid = new String(out, 0, n, StandardCharsets.US_ASCII);
            }
            return oid;
        }
    }

    // ------------------------------------------------------------------ notify and fence

    /** See RbdBdev#notifyHeader. */
    List<Watcher> notifyHeader(int timeoutMs) throws IOException {
        Map<Long, String> listed = watcherAddresses();
        long[] late = new long[2 * WATCHERS_MAX];
        int n = connection.withConn(c -> RbdNative.notify(c.ioctx, oid(), timeoutMs, late));
        if (n < 0) {
            throw connection.failure(n == -RbdNative.ETIMEDOUT ? "tell which watchers did not answer a notification of"
                : "notify the header of", n);
        }
        if (n > WATCHERS_MAX) {
            throw new IOException("rbd bdev " + name + ": " + n + " watches of " + options.pool() + "/"
                + options.image() + " did not answer, more than the " + WATCHERS_MAX + " this gateway can fence");
        }
        long me = clientId();
        Map<Long, Watcher> out = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            long id = late[2 * i];
            if (id == me || out.containsKey(id)) {
                continue; // this client answers its own notifications at once; a client with two watches is one
            }
            if (!listed.containsKey(id)) {
                listed.putAll(watcherAddresses());
            }
            out.put(id, new Watcher(id, listed.get(id)));
        }
        return List.copyOf(out.values());
    }

    /** The watchers of the image's header by client id: their addresses. */
    private Map<Long, String> watcherAddresses() throws IOException {
        long[] ids = new long[WATCHERS_MAX];
        String[] addrs = new String[WATCHERS_MAX];
        int n = connection.withConn(c -> RbdNative.watchers(c.image, ids, addrs));
        if (n < 0) {
            throw connection.failure("list the watchers of", n);
        }
        Map<Long, String> m = new HashMap<>();
        for (int i = 0; i < n; i++) {
            m.put(ids[i], addrs[i]);
        }
        return m;
    }

    /** This gateway's client id ({@code client.<id>}) on the cluster now. */
    long clientId() throws IOException {
        return connection.withConnLong(c -> RbdNative.instanceId(c.cluster));
    }

    /** See RbdBdev#blocklist. */
    void blocklist(Watcher w) throws IOException {
        if (w.address() == null || w.address().isEmpty()) {
            throw new IOException("rbd bdev " + name + ": client." + w.clientId() + " no longer watches "
                + options.pool() + "/" + options.image() + ", so its address is not known and it cannot be fenced");
        }
        int rc = connection.withConn(c -> RbdNative.blocklist(c.cluster, w.address()));
        if (rc < 0) {
            throw connection.failure("blocklist client." + w.clientId() + " at " + w.address() + ", a watcher of", rc);
        }
        LOG.warn("rbd bdev {}: blocklisted client.{} at {}, a watcher of {}/{} that did not answer", name,
            w.clientId(), w.address(), options.pool(), options.image());
    }

    /** See RbdBdev#watchedByOthers. */
    boolean watchedByOthers() throws IOException {
        int n = connection.withConn(c -> RbdNative.otherWatchers(c.cluster, c.image));
        if (n < 0) {
            throw connection.failure("list the watchers of", n);
        }
        return n > 0;
    }

    // ------------------------------------------------------------------ the watch

    /** See RbdBdev#watchHeader. */
    void watch(HeaderListener listener) throws IOException {
        listeners.add(listener);
        synchronized (this) {
            if (watch == 0 && !connection.isClosed()) {
                long w = connection.withConnLong(this::watchOn);
                if (w < 0) {
                    listeners.remove(listener);
                    throw connection.failure("watch the header of", (int) w);
                }
                watch = w;
            }
        }
    }

    void unwatch(HeaderListener listener) {
        listeners.remove(listener);
    }

    /** Whether the header is watched now (false while a broken watch has not been made again). */
    synchronized boolean watched() {
        return watch != 0;
    }

    /**
     * rados_watch2 of the header on {@code c}, remembered as the watch's connection: the handle or -errno. Under
     * this.
     */
    private long watchOn(Conn c) throws IOException {
        long w = RbdNative.watch(c.ioctx, oid(), tag);
        if (w > 0) {
            watchConn = c;
        }
        return w;
    }

    /**
     * The header was notified (a librados thread): true when every listener has taken it in already (the library
     * acknowledges it now), false when the last one to finish acknowledges it. Or the watch broke ({@code err} < 0):
     * it is made again.
     */
    boolean onHeaderUpdated(int err, long handle, long notifyId) {
        if (err < 0) {
            if (!connection.isFenced()) {
                LOG.warn("rbd bdev {}: the watch of {}/{} broke ({}); watching again", name, options.pool(),
                    options.image(), RbdNative.strerror(err));
                Thread t = new Thread(this::rewatch, "rbd-rewatch-" + name);
                t.setDaemon(true);
                t.start();
            }
            return true;
        }
        // the callback holds one count itself: while it runs, no listener's done can bring the count to zero
        AtomicInteger pending = new AtomicInteger(1);
        tellListeners(HeaderEvent.NOTIFIED, pending, () -> ackLater(handle, notifyId));
        return pending.decrementAndGet() == 0;
    }

    /**
     * Tells every listener of {@code event}; {@code pending} counts the listeners not done (plus the caller's own
     * count), and whoever brings it to zero runs {@code allDone} (the caller, when it does, runs nothing more).
     */
    private void tellListeners(HeaderEvent event, AtomicInteger pending, Runnable allDone) {
        for (HeaderListener l : listeners) {
            pending.incrementAndGet();
            AtomicBoolean once = new AtomicBoolean();
            Runnable done = () -> {
                if (once.compareAndSet(false, true) && pending.decrementAndGet() == 0) {
                    allDone.run();
                }
            };
            try {
                l.headerChanged(event, done);
            } catch (RuntimeException e) {
                LOG.error("rbd bdev {}: a header listener failed", name, e);
                done.run();
            }
        }
    }

    /**
     * Tells every listener that a new client serves the image ({@link HeaderEvent#RECONNECTED}) and waits until each
     * is done (the reconnect thread).
     */
    void awaitReconnected() {
        CountDownLatch latch = new CountDownLatch(1);
        AtomicInteger pending = new AtomicInteger(1);
        tellListeners(HeaderEvent.RECONNECTED, pending, latch::countDown);
        if (pending.decrementAndGet() == 0) {
            return;
        }
        boolean interrupted = false;
        try {
            while (!latch.await(10, TimeUnit.SECONDS)) {
                LOG.warn("rbd bdev {}: still draining the commands that passed while the client was blocklisted",
                    name);
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Acknowledges notification {@code notifyId} on watch {@code handle} unless that watch ended meanwhile. */
    private synchronized void ackLater(long handle, long notifyId) {
        if (watch != handle) {
            return; // the watch was made again or ended: the notifier hears of it as a timeout
        }
        int rc = RbdNative.notifyAck(handle, notifyId);
        if (rc < 0) {
            LOG.warn("rbd bdev {}: cannot acknowledge a notification of {}/{}: {}", name, options.pool(),
                options.image(), RbdNative.strerror(rc));
        }
    }

    /**
     * Makes a broken watch again (its own thread: a watch cannot end inside its own callback). A failed attempt is
     * tried again after 100 ms, doubling up to 5 s, until it succeeds or the device is closed or fenced (the
     * reconnect then watches on the new client); each failure is counted ({@link #rewatchFailuresTotal}), the first
     * logged as a warning and, once the header has gone unwatched for 30 s, as an error: changes other gateways make
     * (reservations) are not seen meanwhile.
     */
    private void rewatch() {
        synchronized (this) {
            if (connection.isClosed() || watch == 0 || connection.isFenced()) {
                return;
            }
            RbdNative.unwatch(watch);
            watch = 0;
        }
        long start = System.nanoTime();
        long delay = REWATCH_FIRST_DELAY_MS;
        boolean errorLogged = false;
        for (int attempt = 1; ; attempt++) {
            String failure;
            synchronized (this) {
                if (connection.isClosed() || connection.isFenced() || watch != 0) {
                    return;
                }
                failure = watchAgain();
                if (failure == null) {
                    if (attempt > 1) {
                        LOG.info("rbd bdev {}: watches the header of {}/{} again (attempt {}, {} ms after the break)",
                            name, options.pool(), options.image(), attempt,
                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                    }
                    // changes may have been missed while the watch was down
                    tellListeners(HeaderEvent.WATCHED_AGAIN, new AtomicInteger(1), () -> { });
                    return;
                }
            }
            REWATCH_FAILURES.increment();
            long down = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            if (!errorLogged && down >= REWATCH_ERROR_AFTER_MS) {
                errorLogged = true;
                LOG.error("rbd bdev {}: the header of {}/{} has not been watched for {} ms ({} attempts, last: {}); "
                    + "changes other gateways make are not seen until it is; still trying every {} ms", name,
                    options.pool(), options.image(), down, attempt, failure, REWATCH_MAX_DELAY_MS);
            } else if (attempt == 1) {
                LOG.warn("rbd bdev {}: cannot watch the header of {}/{} again: {}; retrying", name, options.pool(),
                    options.image(), failure);
            }
            if (!RbdConnection.sleep(delay)) {
                return;
            }
            delay = Math.min(REWATCH_MAX_DELAY_MS, delay * 2);
        }
    }

    /** One attempt to watch the header (under this): null, or why it failed. */
    private String watchAgain() {
        try {
            long w = connection.withConnLong(this::watchOn);
            if (w < 0) {
                return RbdNative.strerror((int) w);
            }
            watch = w;
            return null;
        } catch (IOException e) {
            return e.getMessage();
        }
    }

    /** Failed attempts of every rbd bdev of this process to watch its header again after the watch broke. */
    static long rewatchFailuresTotal() {
        return REWATCH_FAILURES.sum();
    }

    // ------------------------------------------------------------------ reconnect and close

    /**
     * Before a new client replaces the old one (RbdConnection.Reconnect): ends the watch on the old client; whether
     * the header must be watched on the new one. The break of the watch, seen first, may have ended the old watch
     * already (rewatch), so "there was a watch" is no sign of whether one is wanted: any listener wants one.
     */
    boolean leaveOldClient() {
        long oldWatch;
        synchronized (this) {
            if (connection.isClosed()) {
                return false;
            }
            oldWatch = watch;
            watch = 0;
        }
        if (oldWatch != 0) {
            RbdNative.unwatch(oldWatch); // fails on a blocklisted client; frees the watch and waits for its callbacks
        }
        return oldWatch != 0 || !listeners.isEmpty();
    }

    /** After the swap: ends a watch made on the old client meanwhile and watches on {@code fresh} when wanted. */
    synchronized void joinNewClient(Conn fresh, boolean wanted) {
        if (watch != 0 && watchConn != fresh) {
            // made on the old client between the two steps (a first header listener): the old client is retired
            // next, and a watch must end before its ioctx does (else its unwatch reads freed memory)
            RbdNative.unwatch(watch);
            watch = 0;
            wanted = true;
        }
        if (wanted && watch == 0 && !connection.isClosed()) {
            try {
                long w = watchOn(fresh);
                if (w < 0) {
                    LOG.error("rbd bdev {}: cannot watch the header on the new client: {}", name,
                        RbdNative.strerror((int) w));
                } else {
                    watch = w;
                }
            } catch (IOException e) {
                LOG.error("rbd bdev {}: {}", name, e.getMessage());
            }
        }
    }

    /** Ends the watch and forgets the listeners (the device closes). */
    void close() {
        synchronized (this) {
            if (watch != 0) {
                RbdNative.unwatch(watch);
                watch = 0;
            }
        }
        listeners.clear();
    }
}
