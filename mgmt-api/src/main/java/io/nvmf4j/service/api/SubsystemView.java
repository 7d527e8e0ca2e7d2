package io.nvmf4j.service.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.engine.ListenerState;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A subsystem as the API shows it: its configuration ({@link SubsystemConfig}'s fields, in its order) with each
 * listener as a {@link ListenerView} (state, bound port, cause). A plain Jackson-serialisable class.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public final class SubsystemView {
    public String nqn;
    public String serial;
    public String model;
    public boolean allowAnyHost;
    public List<String> hosts;
    /** DH-HMAC-CHAP key files per host (paths only; the keys never leave their files). */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public List<HostKeyConfig> hostKeys;
    public int maxNamespaces;
    public int minCntlid;
    public int maxCntlid;
    public List<NamespaceConfig> namespaces;
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public List<ListenerView> listeners;

    public SubsystemView() {
    }

    static SubsystemView of(SubsystemConfig s, Map<ListenerConfig, ListenerState> states) {
        SubsystemView v = new SubsystemView();
        v.nqn = s.nqn;
        v.serial = s.serial;
        v.model = s.model;
        v.allowAnyHost = s.allowAnyHost;
        v.hosts = s.hosts;
        v.hostKeys = s.hostKeys;
        v.maxNamespaces = s.maxNamespaces;
        v.minCntlid = s.minCntlid;
        v.maxCntlid = s.maxCntlid;
        v.namespaces = s.namespaces;
        v.listeners = listeners(s.listeners, states);
        return v;
    }

    static List<ListenerView> listeners(List<ListenerConfig> listeners, Map<ListenerConfig, ListenerState> states) {
        List<ListenerView> out = new ArrayList<>();
        for (ListenerConfig l : listeners) {
            out.add(ListenerView.of(l, states.get(l)));
        }
        return out;
    }
}
