package io.nvmf4j.service;

import ch.qos.logback.core.PropertyDefinerBase;

import java.util.Locale;

/**
 * Picks the log format for logback.xml from {@code NVMF4J_LOG_FORMAT}: {@code text} (the default: one line per event)
 * or {@code json} (one JSON object per line, logback's {@code JsonEncoder}). Another value is reported on stderr
 * (logback.xml silences logback's own status messages) and the service logs as text.
 */
public final class LogFormat extends PropertyDefinerBase {
    public static final String ENV = "NVMF4J_LOG_FORMAT";

    @Override
    public String getPropertyValue() {
        return resolve(System.getenv(ENV));
    }

    /** The appender name in logback.xml for a value of {@value #ENV}. */
    String resolve(String value) {
        if (value == null || value.isBlank()) {
            return "text";
        }
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.equals("text") || v.equals("json")) {
            return v;
        }
        System.err.println("nvmf4j: " + ENV + ": must be text or json, got '" + value + "'; logging as text");
        return "text";
    }
}
