package io.nvmf4j.service.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.nvmf4j.ControlException;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.PoolInfo;
import io.nvmf4j.engine.VolumeInfo;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Capacity per pool ({@code nvmf_pool_size_bytes}, {@code _used_bytes}, {@code _free_bytes},
 * {@code nvmf_pool_watermark_crossings_total}) and per volume ({@code nvmf_volume_provisioned_bytes},
 * {@code nvmf_volume_allocated_bytes}). Read from the control layer at each scrape ({@link #refresh}: one
 * {@code statvfs} per pool, one {@code stat} per volume), so a scrape sees the pools as they are; the series of a
 * removed pool or deleted volume go at the next scrape, so their number follows the document's.
 */
final class PoolMeters {
    private final MeterRegistry registry;
    private final MultiGauge size;
    private final MultiGauge used;
    private final MultiGauge free;
    private final MultiGauge provisioned;
    private final MultiGauge allocated;
    /** Each pool's watermark crossings as last read; its counter reads them. */
    private final Map<String, Long> crossings = new ConcurrentHashMap<>();
    private final Map<String, FunctionCounter> crossingCounters = new HashMap<>();

    PoolMeters(MeterRegistry registry) {
        this.registry = registry;
        size = gauge(MetricNames.POOL_SIZE, "bytes of the pool's file system");
        used = gauge(MetricNames.POOL_USED, "bytes in use on the pool's file system");
        free = gauge(MetricNames.POOL_FREE, "bytes a writer can still allocate in the pool");
        provisioned = gauge(MetricNames.VOLUME_PROVISIONED, "the volume's size");
        allocated = gauge(MetricNames.VOLUME_ALLOCATED,
            "bytes the volume's file occupies (blocks shared with snapshots and clones counted in each)");
    }

    private MultiGauge gauge(String name, String description) {
        return MultiGauge.builder(name).description(description).baseUnit("bytes").register(registry);
    }

    /** Reads every pool and volume of {@code t} now; registers what is new, removes what is gone. */
    synchronized void refresh(ConfigController<?> t) {
        List<MultiGauge.Row<?>> s = new ArrayList<>();
        List<MultiGauge.Row<?>> u = new ArrayList<>();
        List<MultiGauge.Row<?>> f = new ArrayList<>();
        List<MultiGauge.Row<?>> p = new ArrayList<>();
        List<MultiGauge.Row<?>> a = new ArrayList<>();
        List<PoolInfo> pools = t.pools();
        for (PoolInfo pool : pools) {
            Tags tags = Tags.of(MetricNames.TAG_POOL, pool.name());
            s.add(MultiGauge.Row.of(tags, pool.size()));
            u.add(MultiGauge.Row.of(tags, pool.used()));
            f.add(MultiGauge.Row.of(tags, pool.free()));
            crossings.put(pool.name(), pool.watermarkCrossings());
            crossingCounters.computeIfAbsent(pool.name(), name -> FunctionCounter.builder(
                    MetricNames.POOL_WATERMARK_CROSSINGS, crossings, c -> c.getOrDefault(name, 0L))
                .description("times the pool's use rose above its warnPercent (each crossing logged once)")
                .tags(tags).register(registry));
            for (VolumeInfo v : volumesOf(t, pool.name())) {
                Tags vt = tags.and(MetricNames.TAG_VOLUME, v.name());
                p.add(MultiGauge.Row.of(vt, v.provisionedBytes()));
                a.add(MultiGauge.Row.of(vt, v.allocatedBytes()));
            }
        }
        size.register(s, true);
        used.register(u, true);
        free.register(f, true);
        provisioned.register(p, true);
        allocated.register(a, true);
        crossingCounters.entrySet().removeIf(e -> {
            boolean gone = pools.stream().noneMatch(x -> x.name().equals(e.getKey()));
            if (gone) {
                registry.remove(e.getValue());
                crossings.remove(e.getKey());
            }
            return gone;
        });
    }

    /** The volumes of {@code pool}; none when it was removed since the pools were read. */
    private static List<VolumeInfo> volumesOf(ConfigController<?> t, String pool) {
        try {
            return t.volumes(pool);
        } catch (ControlException e) {
            return List.of();
        }
    }
}
