package io.nvmf4j.leakcheck;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.List;

/**
 * Fails a test class when Netty reports a leak by its end: after the class (its own {@code @AfterAll} included: an
 * extension found on the classpath wraps it), garbage is collected, Netty's detectors poll, and every report made
 * since the previous class fails this one with the report's records (where the buffer was allocated and last
 * touched). Registered for every test class through the JUnit's extension autodetection (junit-platform.properties
 * and META-INF/services of this module's test jar, which the service's and the SPDK engine's tests take too); does
 * nothing when leak detection is disabled (the allocation checks' runs).
 */
public final class LeakCheckExtension implements AfterAllCallback {
    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (!LeakReports.enabled()) {
            return;
        }
        if (!LeakReports.buffersRecorded()) {
            throw new AssertionError("Netty's buffer leak detector was created before LeakReports.install(): its"
                + " leak reports are not recorded (is " + LeakCheckListener.class.getName() + " registered?)");
        }
        List<String> reports = LeakReports.collect();
        if (!reports.isEmpty()) {
            throw new AssertionError(message(reports, "by the end of "
                + context.getTestClass().map(Class::getName).orElse(context.getDisplayName())));
        }
    }

    static String message(List<String> reports, String when) {
        StringBuilder b = new StringBuilder("Netty reported ").append(reports.size())
            .append(reports.size() == 1 ? " leak " : " leaks ").append(when).append(':');
        for (String r : reports) {
            b.append("\n\n").append(r);
        }
        return b.toString();
    }
}
