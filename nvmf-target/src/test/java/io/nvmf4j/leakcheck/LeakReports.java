package io.nvmf4j.leakcheck;

import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import io.netty.util.ResourceLeakTracker;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Netty's leak reports, kept for the tests to fail on. {@link #install()} makes every {@link ResourceLeakDetector}
 * Netty creates from then on a {@link Recording} one: it logs a report as Netty's does and also keeps it here. Netty
 * finds a leak only when a tracked object that was never released has been garbage-collected and a later tracked
 * allocation polls the detector's reference queue, so {@link #collect()} forces both before it hands over what was
 * reported. Only Netty's own reports are kept: an object that was released is never one.
 */
public final class LeakReports {
    /** How long {@link #collect()} waits for the reference handler to enqueue what a collection cleared. */
    private static final Duration ENQUEUE_WAIT = Duration.ofSeconds(30);

    private static final List<Recording<?>> DETECTORS = new CopyOnWriteArrayList<>();
    private static final List<String> REPORTS = new ArrayList<>();
    private static volatile boolean installed;

    private LeakReports() {
    }

    /**
     * Makes Netty create recording detectors. It must run before Netty's classes that keep a detector
     * (AbstractByteBuf, HashedWheelTimer) are initialised: {@link LeakCheckListener} calls it as the test plan starts.
     */
    public static synchronized void install() {
        if (!installed) {
            ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new Factory());
            installed = true;
        }
    }

    /** Whether Netty's buffers report to a recording detector (false if AbstractByteBuf was initialised too early). */
    public static boolean buffersRecorded() {
        try {
            Class.forName("io.netty.buffer.AbstractByteBuf", true, LeakReports.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            return true; // no Netty buffers in this run
        }
        return DETECTORS.stream().anyMatch(d -> d.resourceType.equals("ByteBuf"));
    }

    /** Whether leak detection is on at all ({@code -Dio.netty.leakDetection.level}). */
    public static boolean enabled() {
        return ResourceLeakDetector.getLevel() != ResourceLeakDetector.Level.DISABLED;
    }

    /**
     * Collects garbage, has every detector poll its reference queue, and returns (and forgets) the reports made since
     * the last call: the leaks of objects that were unreachable by now.
     */
    public static List<String> collect() throws InterruptedException {
        awaitCollected();
        awaitCollected(); // the reference handler enqueues one collection's references before the next one's
        for (Recording<?> d : DETECTORS) {
            d.poll();
        }
        return take();
    }

    /** The reports made since the last call, without collecting garbage first. */
    public static List<String> take() {
        synchronized (REPORTS) {
            List<String> r = new ArrayList<>(REPORTS);
            REPORTS.clear();
            return r;
        }
    }

    /**
     * A full collection, then waits until an object it cleared has been enqueued: the reference handler has then
     * taken that collection's cleared references, Netty's trackers among them.
     */
    private static void awaitCollected() throws InterruptedException {
        ReferenceQueue<Object> queue = new ReferenceQueue<>();
        WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
        long deadline = System.nanoTime() + ENQUEUE_WAIT.toNanos();
        do {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no reference enqueued within " + ENQUEUE_WAIT + " of System.gc()");
            }
            System.gc();
        } while (queue.remove(100) == null);
        sentinel.clear();
    }

    private static void record(String report) {
        synchronized (REPORTS) {
            REPORTS.add(report);
        }
    }

    private static final class Factory extends ResourceLeakDetectorFactory {
        @Override
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval) {
            Recording<T> d = new Recording<>(resource, samplingInterval);
            DETECTORS.add(d);
            return d;
        }

        @Override
        @Deprecated
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                                                                   long maxActive) {
            return newResourceLeakDetector(resource, samplingInterval);
        }
    }

    /** Netty's detector, whose reports are also kept in {@link #REPORTS}. */
    static final class Recording<T> extends ResourceLeakDetector<T> {
        final String resourceType;

        Recording(Class<T> resource, int samplingInterval) {
            super(resource, samplingInterval);
            this.resourceType = resource.getSimpleName();
        }

        /** Reports even when Netty's logger is off: a report is what the tests fail on. */
        @Override
        protected boolean needReport() {
            return true;
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            record("LEAK: " + resourceType + ".release() was not called before it's garbage-collected." + records);
            super.reportTracedLeak(resourceType, records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            record("LEAK: " + resourceType + ".release() was not called before it's garbage-collected (not traced:"
                + " -Dio.netty.leakDetection.level=paranoid records where)");
            super.reportUntracedLeak(resourceType);
        }

        /**
         * Polls the reference queue: a tracked allocation does that first (Netty's only way in), and this one is
         * released at once, so it never reports.
         */
        @SuppressWarnings("unchecked")
        void poll() {
            Object probe = new Object();
            ResourceLeakTracker<T> t = trackForcibly((T) probe);
            t.close((T) probe);
        }
    }
}
