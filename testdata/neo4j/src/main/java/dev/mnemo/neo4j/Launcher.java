package dev.mnemo.neo4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.ByteUnit;

/**
 * Launcher starts Neo4j Community embedded for mnemo's tests: Bolt on
 * 127.0.0.1 (no TLS, no auth), one data directory, and a single ready line on
 * stdout ("NEO4J READY bolt://127.0.0.1:PORT") once Bolt accepts sessions.
 * SIGTERM (or Ctrl-C) shuts the database down cleanly.
 *
 * <p>Configuration, flags first, then environment:
 * <ul>
 *   <li>{@code --port N} / {@code NEO4J_PORT}: Bolt port, default 7687;</li>
 *   <li>{@code --data DIR} / {@code NEO4J_DATA_DIR}: Neo4j home (data, logs), default ./target/neo4j-data;</li>
 *   <li>{@code --pagecache SIZE_MB} / {@code NEO4J_PAGECACHE_MB}: page cache, default 256;</li>
 *   <li>{@code --config "k=v k=v"} / {@code NEO4J_CONFIG}: more Neo4j settings (any neo4j.conf key),
 *       over the launcher's own (internal.cypher.use_parameter_size=false);</li>
 *   <li>{@code --browser PORT} / {@code NEO4J_BROWSER_PORT}: serve Neo4j Browser on
 *       http://127.0.0.1:PORT/browser/ (see BrowserServer), default off.</li>
 * </ul>
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(option(args, "--port", "NEO4J_PORT", "7687"));
        Path home = Path.of(option(args, "--data", "NEO4J_DATA_DIR", "target/neo4j-data")).toAbsolutePath();
        long pageCacheMb = Long.parseLong(option(args, "--pagecache", "NEO4J_PAGECACHE_MB", "256"));
        int browserPort = Integer.parseInt(option(args, "--browser", "NEO4J_BROWSER_PORT", "0"));
        Map<String, String> raw = rawConfig(option(args, "--config", "NEO4J_CONFIG", ""));
        Files.createDirectories(home);

        long started = System.nanoTime();
        // NEO4J_CONFIG settings go through a properties file: the embedded
        // builder takes raw "key=value" settings only from a file.
        Path extra = home.resolve("mnemo-extra.conf");
        StringBuilder props = new StringBuilder();
        raw.forEach((k, v) -> props.append(k).append('=').append(v).append('\n'));
        Files.writeString(extra, props.toString());
        DatabaseManagementService service = new DatabaseManagementServiceBuilder(home)
                .loadPropertiesFromFile(extra)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pageCacheMb))
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("NEO4J STOPPING");
            try {
                service.shutdown();
            } finally {
                System.out.println("NEO4J STOPPED");
                System.out.flush();
                stopped.countDown();
            }
        }, "neo4j-shutdown"));

        // Touch the default database so "ready" means queries work, not only that Bolt listens.
        GraphDatabaseService db = service.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        db.executeTransactionally("RETURN 1");

        String browser = "";
        if (browserPort > 0) {
            String version = db.executeTransactionally(
                    "CALL dbms.components() YIELD versions RETURN versions[0] AS v", Map.of(),
                    r -> r.hasNext() ? String.valueOf(r.next().get("v")) : "5");
            BrowserServer.start(browserPort, port, version);
            browser = " browser=http://127.0.0.1:" + browserPort + "/browser/";
        }

        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        System.out.println("NEO4J READY bolt://127.0.0.1:" + port + browser + " home=" + home + " startup_ms=" + ms);
        System.out.flush();
        stopped.await();
    }

    /** rawConfig is the launcher's settings, then "key=value key=value" (whitespace-separated) over them. */
    private static Map<String, String> rawConfig(String spec) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        // Neo4j keys its plan cache by the size bucket of every string and
        // list parameter (0, 1, <=10, <=100, ...) as well as its type, so one
        // statement is planned again for each mix of id, name and list
        // lengths; mnemo's statements take seconds to plan. docs/graph.md,
        // "Neo4j plan cache".
        out.put("internal.cypher.use_parameter_size", "false");
        for (String kv : spec.trim().split("\\s+")) {
            if (kv.isEmpty()) {
                continue;
            }
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("NEO4J_CONFIG: want key=value, got " + kv);
            }
            out.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return out;
    }

    private static String option(String[] args, String flag, String env, String fallback) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(flag)) {
                return args[i + 1];
            }
        }
        String v = System.getenv(env);
        return v == null || v.isBlank() ? fallback : v;
    }
}
