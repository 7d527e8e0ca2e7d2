package io.nvmf4j.engine;

import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.EngineCapabilities;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.IoObserver;

import java.io.IOException;
import java.util.List;
import java.util.ServiceLoader;

/**
 * The engines a document may name in {@code "engine"} ({@link EngineCapabilities}), and starting the one it names
 * through its {@link EngineProvider}: {@code java} from this module ({@code io.nvmf4j.javaengine}), {@code spdk} from
 * spdk-jni. When the named engine cannot run here, starting fails with {@link EngineUnavailableException} saying why
 * (never a silent fall-back to another engine).
 */
public final class Engines {
    public static final String JAVA = EngineCapabilities.JAVA.name();
    public static final String SPDK = EngineCapabilities.SPDK.name();

    private Engines() {
    }

    /** The provider of {@code name} on the class path, checked to be able to run here. */
    private static EngineProvider provided(String name) {
        for (EngineProvider p : ServiceLoader.load(EngineProvider.class, Engines.class.getClassLoader())) {
            if (p.name().equals(name)) {
                String cause = p.unavailabilityCause();
                if (cause != null) {
                    throw new EngineUnavailableException("engine " + name + " cannot run here: " + cause);
                }
                return p;
            }
        }
        throw new EngineUnavailableException("engine " + name + ": its module is not on the class path (the "
            + name + " engine ships in spdk-jni); set \"engine\": \"java\" or leave \"engine\" out to use the "
            + "java engine");
    }

    /**
     * Null when engine {@code name} can run here, else why not (for a status page and for tests).
     */
    public static String unavailabilityCause(String name) {
        try {
            provided(name);
            return null;
        } catch (EngineUnavailableException e) {
            return e.getMessage();
        }
    }

    /**
     * What engine {@code name} runs on here ({@link EngineProvider#runsOn}: its native library and version), or
     * null when it cannot run here or has nothing to say.
     */
    public static String runsOn(String name) {
        try {
            return provided(name).runsOn();
        } catch (EngineUnavailableException e) {
            return null;
        }
    }

    /**
     * Validates the document and starts the engine it names, under its control layer. Throws {@link io.nvmf4j.config.ConfigException}
     * for a bad document, {@link EngineUnavailableException} when that engine cannot run here, and whatever
     * the engine's start-up throws (a port taken: {@link IOException}).
     */
    public static ConfigController<Engine> start(TargetConfig config, IoObserver observer) throws IOException {
        return start(config, observer, null);
    }

    /**
     * As {@link #start(TargetConfig, IoObserver)}, with the service's state directory, where the java engine keeps
     * the reservations of namespaces with Persist Through Power Loss on (null: none kept, PTPL unsupported).
     */
    public static ConfigController<Engine> start(TargetConfig config, IoObserver observer,
                                                 java.nio.file.Path stateDir) throws IOException {
        ConfigValidator.validate(config);
        EngineProvider provider = provided(config.engine);
        OpenFiles.check(config, OpenFiles.limit(), provider.descriptorsAtStart(config));
        return ConfigController.start(config, document -> provider.start(document, observer, stateDir));
    }

    /** Whether {@code name} is an engine a document may name. */
    public static boolean isKnown(String name) {
        return EngineCapabilities.of(name) != null;
    }

    /** The engine names, in order ({@link EngineCapabilities#names()}). */
    public static List<String> names() {
        return EngineCapabilities.names();
    }

    /** The names as a phrase for messages: {@code "java or spdk"}. */
    public static String describe() {
        return String.join(" or ", names());
    }
}
