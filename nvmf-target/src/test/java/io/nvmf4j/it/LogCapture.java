package io.nvmf4j.it;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * Collects what one logger writes at INFO and above while open (spdk-jni's engine tests use it too); opened at a
 * finer level, it collects that level too.
 */
public final class LogCapture implements AutoCloseable {
    private final Logger logger;
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Level oldLevel;
    private final boolean oldAdditive;

    public LogCapture(String loggerName) {
        this(loggerName, Level.INFO);
    }

    /**
     * Collects from {@code level} up. A level finer than the logger's is set on it while open, and the logger then
     * passes nothing on to the console (its DEBUG lines are for this capture only); both are undone on close.
     */
    public LogCapture(String loggerName, Level level) {
        logger = (Logger) LoggerFactory.getLogger(loggerName);
        oldLevel = logger.getLevel();
        oldAdditive = logger.isAdditive();
        if (!level.isGreaterOrEqual(logger.getEffectiveLevel())) {
            logger.setLevel(level);
            logger.setAdditive(false);
        }
        appender.start();
        logger.addAppender(appender);
    }

    /** Formatted messages at INFO or above that contain {@code text}. */
    public List<String> lines(String text) {
        return events(text).stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    /** The first event at INFO or above whose message contains {@code text}, waiting up to {@code timeout}. */
    public ILoggingEvent await(String text, java.time.Duration timeout) throws InterruptedException {
        return await(text, Level.INFO, timeout);
    }

    /** The first event at {@code level} or above whose message contains {@code text}, waiting up to {@code timeout}. */
    public ILoggingEvent await(String text, Level level, java.time.Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<ILoggingEvent> e = events(text, level);
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
        return events(text, Level.INFO);
    }

    private List<ILoggingEvent> events(String text, Level level) {
        synchronized (appender) { // AppenderBase.doAppend holds this lock
            return appender.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(level))
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
        logger.setLevel(oldLevel);
        logger.setAdditive(oldAdditive);
    }
}
