// Reference analysis and BM25 scores from real Lucene, for the tests in tests/retrieval/ and for
// tests/retrieval/lucene/generate_tables.py.
//
//   java BM25Oracle search DOCS.tsv QUERIES.txt K   -> query index \t doc id \t score \t the score's
//                                                      float bits (Float.floatToIntBits), best first
//   java BM25Oracle analyze TEXTS.txt               -> one line per input line: its tokens, tab separated
//   java BM25Oracle serve                           -> as analyze, texts from standard input; a line
//                                                      holding one backslash ends a batch and flushes
//   java BM25Oracle classes                         -> first \t last \t class: the character classes
//                                                      of StandardTokenizer's scanner, as code point runs
//   java BM25Oracle lower                           -> code point \t Character.toLowerCase(code point),
//                                                      for every code point the JDK lower-cases
//
// DOCS.tsv holds "id<TAB>text" per line; QUERIES.txt and TEXTS.txt one text per line. Texts and
// output tokens are escaped: \n, \r, \t and \\ stand for newline, carriage return, tab and backslash.
// All files are UTF-8 and every output line ends with \n alone.
// Documents are analysed with StandardAnalyzer without stop words and scored with BM25Similarity
// (k1 1.2, b 0.75), the query built as OpenSearch's match query builds it (a disjunction of terms).

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.analysis.standard.StandardTokenizerImpl;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field.Store;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LogDocMergePolicy;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.util.QueryBuilder;

public class BM25Oracle {
    static String unescape(String s) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                out.append(n == 'n' ? '\n' : n == 'r' ? '\r' : n == 't' ? '\t' : n);
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t");
    }

    static List<String> lines(String path) throws Exception {
        List<String> out = new ArrayList<>();
        try (BufferedReader r = Files.newBufferedReader(Paths.get(path), StandardCharsets.UTF_8)) {
            // Lines end with \n only (the writer escapes \r), so split on it alone.
            StringBuilder line = new StringBuilder();
            for (int c; (c = r.read()) != -1; ) {
                if (c == '\n') {
                    out.add(line.toString());
                    line.setLength(0);
                } else {
                    line.append((char) c);
                }
            }
            if (line.length() > 0) out.add(line.toString());
        }
        return out;
    }

    static void tokens(Analyzer analyzer, String text, StringBuilder row) throws Exception {
        try (TokenStream ts = analyzer.tokenStream("text", text)) {
            CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
            ts.reset();
            boolean first = true;
            while (ts.incrementToken()) {
                if (!first) row.append('\t');
                row.append(escape(term.toString()));
                first = false;
            }
            ts.end();
        }
        row.append('\n');
    }

    static void analyze(Analyzer analyzer, String path, PrintWriter out) throws Exception {
        StringBuilder row = new StringBuilder();
        for (String line : lines(path)) {
            row.setLength(0);
            tokens(analyzer, unescape(line), row);
            out.print(row);
        }
    }

    static void serve(Analyzer analyzer, PrintWriter out) throws Exception {
        // Input lines never hold a raw \r (it is escaped), so readLine splits on \n alone here.
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder batch = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            if (line.equals("\\")) {  // an escaped text never is a lone backslash
                out.print(batch);
                out.flush();
                batch.setLength(0);
            } else {
                tokens(analyzer, unescape(line), batch);
            }
        }
    }

    static void classes(PrintWriter out) throws Exception {
        // The scanner's own map from code point to character class (JFlex's ZZ_CMAP): code points in
        // one class are indistinguishable to the grammar.
        Field field = StandardTokenizerImpl.class.getDeclaredField("ZZ_CMAP");
        field.setAccessible(true);
        char[] cmap = (char[]) field.get(null);
        int start = 0;
        for (int cp = 1; cp <= cmap.length; cp++) {
            if (cp == cmap.length || cmap[cp] != cmap[start]) {
                out.print(start + "\t" + (cp - 1) + "\t" + (int) cmap[start] + "\n");
                start = cp;
            }
        }
    }

    static void lower(PrintWriter out) {
        for (int cp = 0; cp <= Character.MAX_CODE_POINT; cp++) {
            int low = Character.toLowerCase(cp);
            if (low != cp) out.print(cp + "\t" + low + "\n");
        }
    }

    static void search(Analyzer analyzer, String docs, String queries, int k, PrintWriter out)
            throws Exception {
        ByteBuffersDirectory dir = new ByteBuffersDirectory();
        // One flush and adjacent-only merges keep Lucene's doc ids in input order, so ties between
        // equal scores break the same way as in the order the caller gave (lower position first).
        IndexWriterConfig config = new IndexWriterConfig(analyzer).setSimilarity(new BM25Similarity())
                .setRAMBufferSizeMB(1024).setMergePolicy(new LogDocMergePolicy());
        try (IndexWriter writer = new IndexWriter(dir, config)) {
            for (String line : lines(docs)) {
                int tab = line.indexOf('\t');
                Document doc = new Document();
                doc.add(new StoredField("id", line.substring(0, tab)));
                doc.add(new TextField("text", unescape(line.substring(tab + 1)), Store.NO));
                writer.addDocument(doc);
            }
            writer.forceMerge(1);
        }
        IndexSearcher searcher = new IndexSearcher(DirectoryReader.open(dir));
        searcher.setSimilarity(new BM25Similarity());
        QueryBuilder builder = new QueryBuilder(analyzer);
        List<String> texts = lines(queries);
        for (int q = 0; q < texts.size(); q++) {
            Query query = builder.createBooleanQuery("text", unescape(texts.get(q)));
            if (query == null) continue;  // no tokens: OpenSearch's match query matches nothing
            for (ScoreDoc hit : searcher.search(query, k).scoreDocs) {
                out.print(q + "\t" + searcher.doc(hit.doc).get("id") + "\t" + hit.score + "\t"
                          + Float.floatToIntBits(hit.score) + "\n");
            }
        }
    }

    public static void main(String[] args) throws Exception {
        PrintWriter out = new PrintWriter(new BufferedWriter(
                new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16));
        Analyzer analyzer = new StandardAnalyzer(CharArraySet.EMPTY_SET);
        switch (args[0]) {
            case "analyze": analyze(analyzer, args[1], out); break;
            case "serve": serve(analyzer, out); break;
            case "search": search(analyzer, args[1], args[2], Integer.parseInt(args[3]), out); break;
            case "classes": classes(out); break;
            case "lower": lower(out); break;
            default: throw new IllegalArgumentException("unknown mode " + args[0]);
        }
        out.flush();
    }
}
