package io.nvmf4j.leakcheck;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.launcher.EngineFilter.includeEngines;

/**
 * The leak check itself: a class whose test drops a buffer unreleased fails (the test passes, the class fails with
 * Netty's report and where the buffer was allocated), one that releases what it allocates passes, and a leak no class
 * check sees ends the run with status 1. The classes run in a launcher of their own, with the same extension
 * autodetection the build has (its end-of-run listener left out in this JVM: it would end it).
 */
class LeakCheckExtensionTest {
    /** Drops a buffer unreleased (run only by the tests here: nested classes are not the build's tests). */
    static class Leaks {
        @Test
        void dropsABuffer() {
            ByteBuf b = ByteBufAllocator.DEFAULT.directBuffer(64);
            b.writeLong(42);
        }
    }

    static class Releases {
        @Test
        void releasesItsBuffer() {
            ByteBuf b = ByteBufAllocator.DEFAULT.directBuffer(64);
            b.writeLong(42);
            b.release();
        }
    }

    @Test
    void aClassThatLeaksABufferFailsWithNettysReport() {
        TestExecutionSummary s = run(Leaks.class, true);
        assertThat(s.getTestsSucceededCount()).as("the test itself").isEqualTo(1);
        assertThat(s.getContainersFailedCount()).as("its class").isEqualTo(1);
        String message = s.getFailures().get(0).getException().getMessage();
        assertThat(message).contains("Netty reported 1 leak by the end of " + Leaks.class.getName(),
            "LEAK: ByteBuf.release() was not called", Leaks.class.getName() + ".dropsABuffer");
    }

    @Test
    void aClassThatReleasesWhatItAllocatesPasses() {
        TestExecutionSummary s = run(Releases.class, true);
        assertThat(s.getTestsSucceededCount()).isEqualTo(1);
        assertThat(s.getTotalFailureCount()).isZero();
    }

    /** Without the class check (autodetection off) the leak is found at the end of the run, which then fails. */
    @Test
    void aLeakFoundAfterTheLastClassEndsTheRunWithStatus1() throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", System.getProperty("java.class.path"), "-Dio.netty.leakDetection.level=paranoid",
            LeakyRun.class.getName()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isEqualTo(LeakCheckListener.LEAK_STATUS);
        assertThat(out).contains("Netty reported 1 leak after the last test class's check",
            Leaks.class.getName() + ".dropsABuffer");
    }

    /** Runs {@link Leaks} in a launcher with the end-of-run listener and no class check; exits 0 if that returns. */
    static final class LeakyRun {
        public static void main(String[] args) {
            LauncherFactory.create().execute(request(Leaks.class, false, false));
            System.exit(0);
        }
    }

    private static TestExecutionSummary run(Class<?> c, boolean classCheck) {
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        LauncherFactory.create().execute(request(c, classCheck, true), summary);
        return summary.getSummary();
    }

    private static LauncherDiscoveryRequest request(Class<?> c, boolean classCheck, boolean withoutEndCheck) {
        LauncherDiscoveryRequestBuilder b = LauncherDiscoveryRequestBuilder.request().selectors(selectClass(c))
            .filters(includeEngines("junit-jupiter"))
            .configurationParameter("junit.jupiter.extensions.autodetection.enabled", Boolean.toString(classCheck));
        if (withoutEndCheck) {
            b.configurationParameter("junit.platform.execution.listeners.deactivate",
                LeakCheckListener.class.getName());
        }
        return b.build();
    }
}
