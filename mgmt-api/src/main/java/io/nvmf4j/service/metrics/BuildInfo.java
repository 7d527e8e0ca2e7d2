package io.nvmf4j.service.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * {@code nvmf4j_build_info{version,revision,java,engine} 1}: what runs, for dashboards and alerts that join on it.
 * Version and git revision come from {@value #RESOURCE}, which the build writes (the revision is {@code unknown}
 * when the build ran outside a git checkout).
 */
final class BuildInfo {
    static final String RESOURCE = "/io/nvmf4j/service/build.properties";
    static final String UNKNOWN = "unknown";

    private BuildInfo() {
    }

    /** The build's properties: {@code version} and {@code revision}, each {@code unknown} where absent. */
    static Properties load() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream(RESOURCE)) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (String k : new String[] {"version", "revision"}) {
            String v = p.getProperty(k, "").trim();
            p.setProperty(k, v.isEmpty() || v.startsWith("${") ? UNKNOWN : v);
        }
        return p;
    }

    static void register(MeterRegistry registry, String engine) {
        Properties p = load();
        Gauge.builder(MetricNames.BUILD_INFO, () -> 1)
            .description("the running build: version, git revision, Java runtime and engine")
            .tag("version", p.getProperty("version"))
            .tag("revision", p.getProperty("revision"))
            .tag("java", System.getProperty("java.version"))
            .tag("engine", engine == null ? UNKNOWN : engine)
            .register(registry);
    }
}
