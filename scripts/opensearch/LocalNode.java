// A single OpenSearch node built from Maven Central jars, for tests and local checks (see
// scripts/opensearch-node). OpenSearch's own distribution is a tarball or a Docker image; this runs
// the same server classes, with the modules and plugins given as classes on the classpath, the way
// OpenSearch's test framework starts its nodes.
//
//   java -cp classes:lib/*:plugins/*/* LocalNode HOME PLUGIN_CLASS... [?OPTIONAL_PLUGIN_CLASS...]
//
// HOME holds data/, logs/ and, once the cluster answers, http.address ("127.0.0.1:PORT") and
// plugins.txt (one line per plugin: "loaded NAME" or "failed NAME: why"). A plugin whose class is
// marked optional ("?" before its class) whose class is missing or whose setup throws is left out
// (and said so once) and the node starts without it; a required one that fails stops the node.

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.env.Environment;
import org.opensearch.http.HttpServerTransport;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;

public final class LocalNode extends Node {

    private LocalNode(Environment environment, List<Class<? extends Plugin>> plugins) {
        super(environment, plugins, true);
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: LocalNode HOME [PLUGIN_CLASS...]");
            System.exit(2);
        }
        Path home = Paths.get(args[0]).toAbsolutePath();
        Settings settings = Settings.builder()
            .put("path.home", home.toString())
            .put("path.data", System.getProperty("langrag.data", home.resolve("data").toString()))
            .put("path.logs", home.resolve("logs").toString())
            .put("cluster.name", "langrag-local")
            .put("node.name", "langrag-local")
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", System.getProperty("langrag.port", "0"))
            .put("transport.port", "0")
            // A nearly full disk would make every index read-only; a throwaway node has no use for it.
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("action.auto_create_index", false)
            .build();
        LogConfigurator.configureWithoutConfig(settings);
        Environment environment = InternalSettingsPreparer.prepareEnvironment(
            settings, Collections.emptyMap(), null, () -> "langrag-local");

        Map<String, Class<? extends Plugin>> plugins = new LinkedHashMap<>();
        List<String> optional = new ArrayList<>();
        List<String> report = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            String name = args[i].startsWith("?") ? args[i].substring(1) : args[i];
            try {
                plugins.put(name, Class.forName(name).asSubclass(Plugin.class));
            } catch (Throwable e) {
                if (!args[i].startsWith("?")) {
                    throw e;
                }
                report.add("failed " + name + ": " + oneLine(e));
                continue;
            }
            if (args[i].startsWith("?")) {
                optional.add(name);
            }
        }

        // Build the node; when a plugin's setup throws, leave that plugin (and the ones that need
        // it, which fail for the same reason) out and build again.
        Node node = null;
        while (node == null) {
            try {
                node = new LocalNode(environment, new ArrayList<>(plugins.values()));
            } catch (Throwable e) {
                String culprit = culprit(e, plugins, optional);
                if (culprit == null) {
                    throw e;
                }
                plugins.remove(culprit);
                optional.remove(culprit);
                report.add("failed " + culprit + ": " + oneLine(e));
            }
        }
        for (String name : plugins.keySet()) {
            report.add("loaded " + name);
        }

        CountDownLatch stopped = new CountDownLatch(1);
        final Node running = node;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                running.close();
            } catch (IOException e) {
                e.printStackTrace();
            }
            stopped.countDown();
        }));
        node.start();
        node.client().admin().cluster().prepareHealth()
            .setWaitForYellowStatus().setTimeout(TimeValue.timeValueSeconds(60)).get();
        String address = node.injector().getInstance(HttpServerTransport.class)
            .boundAddress().publishAddress().toString();
        write(home.resolve("plugins.txt"), String.join("\n", report) + "\n");
        write(home.resolve("http.address"), address + "\n");  // last: the script waits for it
        stopped.await();
    }

    // The optional plugin whose package (its first three names, e.g. org.opensearch.knn) appears
    // first in the failure's stack traces, causes included; failing that, the last optional plugin
    // (the later ones build on the earlier: neural-search on k-NN); null when none is left.
    private static String culprit(Throwable e, Map<String, Class<? extends Plugin>> plugins,
                                  List<String> optional) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            for (StackTraceElement frame : t.getStackTrace()) {
                for (String name : optional) {
                    String[] parts = plugins.get(name).getPackageName().split("\\.");
                    String root = String.join(".", List.of(parts).subList(0, Math.min(3, parts.length)));
                    if (frame.getClassName().startsWith(root + ".")) {
                        return name;
                    }
                }
            }
        }
        return optional.isEmpty() ? null : optional.get(optional.size() - 1);
    }

    private static String oneLine(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String text = root.getClass().getName() + ": " + root.getMessage();
        return text.replaceAll("\\s+", " ");
    }

    private static void write(Path path, String text) throws IOException {
        Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
        Files.write(tmp, text.getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE);
    }
}
