package io.nvmf4j.leakcheck;

import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestPlan;

import java.util.List;

/**
 * Installs {@link LeakReports} before any test runs, and fails the run when Netty reports a leak after the last test
 * class's check ({@link LeakCheckExtension}) or in tests of other engines: the reports go to standard error and the
 * JVM exits with status 1, which fails the build (the test runner's fork ends without its result). Registered
 * through META-INF/services.
 */
public final class LeakCheckListener implements TestExecutionListener {
    /** The JVM's exit status when leaks are reported at the end of the run. */
    static final int LEAK_STATUS = 1;

    @Override
    public void testPlanExecutionStarted(TestPlan testPlan) {
        LeakReports.install();
    }

    @Override
    public void testPlanExecutionFinished(TestPlan testPlan) {
        if (!LeakReports.enabled()) {
            return;
        }
        List<String> reports;
        try {
            reports = LeakReports.collect();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reports = LeakReports.take();
        }
        if (!reports.isEmpty()) {
            System.err.println(LeakCheckExtension.message(reports, "after the last test class's check"));
            System.err.flush();
            Runtime.getRuntime().halt(LEAK_STATUS);
        }
    }
}
