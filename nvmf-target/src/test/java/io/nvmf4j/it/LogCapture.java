package io.nvmf4j.it;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

import java.util.List;

/** Collects what one logger writes at INFO and above while open (spdk-jni's engine tests use it too). */
public final class LogCapture implements AutoCloseable {
    private final Logger logger;
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    public LogCapture(String loggerName) {
        logger = (Logger) LoggerFactory.getLogger(loggerName);
        appender.start();
        logger.addAppender(appender);
    }

    /** Formatted messages at INFO or above that contain {@code text}. */
    public List<String> lines(String text) {
        synchronized (appender) { // AppenderBase.doAppend holds this lock
            return appender.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.INFO))
                .map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains(text)).toList();
        }
    }

    /** The first event at INFO or above whose message contains {@code text}, waiting up to {@code timeout}. */
    public ILoggingEvent await(String text, java.time.Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<ILoggingEvent> e = events(text);
            if (!e.isEmpty()) {
                return e.get(0);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no log line containing '" + text + "'");
            }
            Thread.sleep(20);
        }
    }

    /** Events at INFO or above whose formatted message contains {@code text}. */
    public List<ILoggingEvent> events(String text) {
        synchronized (appender) {
            return appender.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.INFO))
                .filter(e -> e.getFormattedMessage().contains(text)).toList();
        }
    }

    /** The key/value pairs of an event (SLF4J's fluent {@code addKeyValue}) as a map. */
    public static java.util.Map<String, Object> keyValues(ILoggingEvent e) {
        java.util.Map<String, Object> out = new java.util.LinkedHashMap<>();
        if (e.getKeyValuePairs() != null) {
            e.getKeyValuePairs().forEach(kv -> out.put(kv.key, kv.value));
        }
        return out;
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        appender.stop();
    }
}
