package io.nvmf4j.service;

import io.nvmf4j.config.ApiConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.Nqn;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.service.api.ApiServer;
import io.nvmf4j.service.api.ApiToken;
import io.nvmf4j.service.metrics.Metrics;
import io.nvmf4j.service.state.ConfigService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The running service: the target restored from the config file, the config service that persists
 * every change, and the management API (unless {@code api.port} is 0). Stops in the reverse order.
 */
public final class Service implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Service.class);

    private final ConfigController<?> target;
    private final Metrics metrics;
    private final ConfigService config;
    private final ApiServer api;
    private final ApiToken token;
    private volatile boolean ready;

    private Service(ConfigController<?> target, Metrics metrics, ConfigService config, ApiServer api, ApiToken token) {
        this.target = target;
        this.metrics = metrics;
        this.config = config;
        this.api = api;
        this.token = token;
    }

    /**
     * Loads {@code configFile} (writing the embedded default there when absent), starts the target and
     * the API, with Micrometer metrics of the data path served at {@code /metrics}. Throws
     * {@link io.nvmf4j.config.ConfigException} for an unusable document and
     * {@link io.nvmf4j.engine.EngineUnavailableException} when the engine it names cannot run here.
     */
    public static Service start(Path stateDir, Path configFile) throws IOException {
        TargetConfig c = loadOrCreate(stateDir, configFile);
        Metrics metrics = new Metrics(c.metrics);
        ConfigController<?> target;
        try {
            target = Engines.start(c, metrics.observer(), stateDir);
        } catch (IOException | RuntimeException e) {
            metrics.close();
            throw e;
        }
        metrics.bind(target);
        ConfigService config;
        try {
            config = new ConfigService(target, configFile);
        } catch (IOException | RuntimeException e) {
            target.close();
            metrics.close();
            throw e;
        }
        ApiServer api = null;
        ApiToken token = null;
        Service[] self = new Service[1];
        try {
            ApiConfig a = c.api;
            if (a.port != 0) {
                token = ApiToken.resolve(a, stateDir, configFile);
                api = ApiServer.start(a, token, config, metrics, () -> self[0] != null && self[0].ready);
            }
        } catch (IOException | RuntimeException e) {
            config.close();
            target.close();
            metrics.close();
            throw e;
        }
        self[0] = new Service(target, metrics, config, api, token);
        self[0].ready = true;
        return self[0];
    }

    /**
     * Logs how to reach each listener (with the nvme-cli command lines) and the API. The launcher calls
     * it once its shutdown hook is in place, so whoever reads these lines can stop the service cleanly.
     */
    public void announce() {
        announce(target);
        if (api != null) {
            String address = target.configSnapshot().api.address;
            String host = address.contains(":") ? "[" + address + "]" : address;
            LOG.info("management API on {}://{}:{} (token in {})", api.tls() ? "https" : "http", host, api.port(),
                token.where());
        } else {
            LOG.info("management API off (api.port is 0)");
        }
    }

    private static TargetConfig loadOrCreate(Path stateDir, Path file) throws IOException {
        makeImagesDir(ConfigCheck.imagesDir(stateDir));
        if (!Files.exists(file)) {
            TargetConfig c = ConfigStore.defaultConfig();
            ConfigCheck.defaultStorage(c, stateDir);
            ConfigStore.assignIdentities(c);
            ConfigStore.save(file, c);
            LOG.info("no configuration at {}: wrote the embedded default there", file);
            return c;
        }
        TargetConfig c = ConfigStore.load(file);
        boolean storage = ConfigCheck.defaultStorage(c, stateDir);
        ConfigCheck.check(c); // never rewrite a document we are about to reject
        if (ConfigStore.assignIdentities(c) | storage) {
            ConfigStore.save(file, c);
            LOG.info("generated missing serial numbers / NGUIDs / UUIDs{} and kept them in {}",
                storage ? " / the storage section (file bdevs in " + c.storage.fileDirectories + ")" : "", file);
        }
        return c;
    }

    /** The default images directory, made once with mode 0700 (a later mode chosen by the operator is kept). */
    private static void makeImagesDir(Path images) throws IOException {
        if (Files.isDirectory(images, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.createDirectories(images.getParent());
        Files.createDirectory(images, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
        LOG.info("made {} (mode 0700) for file bdevs' images", images);
    }

    private static void announce(ConfigController<?> target) {
        TargetConfig config = target.configSnapshot();
        for (Map.Entry<ListenerConfig, InetSocketAddress> e : target.listeners().entrySet()) {
            ListenerConfig l = e.getKey();
            int port = e.getValue().getPort();
            StringBuilder nqns = new StringBuilder();
            for (SubsystemConfig s : config.subsystems) {
                if (s.listeners.contains(l)) {
                    nqns.append(nqns.length() == 0 ? "" : " ").append(s.nqn);
                }
            }
            String at = l.address.contains(":") ? "[" + l.address + "]" : l.address;  // [::1]:4421
            LOG.info("listening on {} {}:{} for {} (and {}): nvme discover -t {} -a {} -s {} ; "
                    + "nvme connect -t {} -a {} -s {} -n {}",
                l.transport, at, port, nqns, Nqn.DISCOVERY, l.transport, l.address, port,
                l.transport, l.address, port, nqns.toString().split(" ")[0]);
        }
        target.listenerStates().forEach((l, state) -> {
            if (!state.listening()) {
                LOG.warn("listener {} is not serving and not in the discovery log: {}", l, state.cause());
            }
        });
    }

    /** The running engine. */
    public ConfigController<?> target() {
        return target;
    }

    public ConfigService config() {
        return config;
    }

    /** The API's bound port, or -1 when the API is off. */
    public int apiPort() {
        return api == null ? -1 : api.port();
    }

    /** The API token, or null when the API is off. */
    public ApiToken apiToken() {
        return token;
    }

    /** Stops the API, lets a change in progress finish and be saved, then stops the target. */
    @Override
    public void close() {
        ready = false;
        if (api != null) {
            api.close();
        }
        config.close();
        target.close();
        metrics.close();
    }
}
