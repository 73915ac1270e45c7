// Reference BM25 scores from real Lucene, for tests/retrieval/test_bm25_lucene.py.
//
//   java BM25Oracle search DOCS.tsv QUERIES.txt K   -> query index \t doc id \t score, best first
//   java BM25Oracle analyze TEXTS.txt               -> one line per input line: its tokens, tab separated
//
// DOCS.tsv holds "id<TAB>text" per line; QUERIES.txt and TEXTS.txt one text per line. Texts are
// escaped: \n, \t and \\ stand for newline, tab and backslash. All files are UTF-8.
// Documents are analysed with StandardAnalyzer without stop words and scored with BM25Similarity
// (k1 1.2, b 0.75), the query built as OpenSearch's match query builds it (a disjunction of terms).

import java.io.BufferedReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
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
                out.append(n == 'n' ? '\n' : n == 't' ? '\t' : n);
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    static List<String> lines(String path) throws Exception {
        List<String> out = new ArrayList<>();
        try (BufferedReader r = Files.newBufferedReader(Paths.get(path), StandardCharsets.UTF_8)) {
            for (String line; (line = r.readLine()) != null; ) out.add(line);
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        Analyzer analyzer = new StandardAnalyzer(CharArraySet.EMPTY_SET);
        if (args[0].equals("analyze")) {
            for (String line : lines(args[1])) {
                StringBuilder row = new StringBuilder();
                try (TokenStream ts = analyzer.tokenStream("text", unescape(line))) {
                    CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
                    ts.reset();
                    boolean first = true;
                    while (ts.incrementToken()) {
                        if (!first) row.append('\t');
                        row.append(term.toString());
                        first = false;
                    }
                    ts.end();
                }
                out.println(row);
            }
            return;
        }
        ByteBuffersDirectory dir = new ByteBuffersDirectory();
        IndexWriterConfig config = new IndexWriterConfig(analyzer).setSimilarity(new BM25Similarity());
        try (IndexWriter writer = new IndexWriter(dir, config)) {
            for (String line : lines(args[1])) {
                int tab = line.indexOf('\t');
                Document doc = new Document();
                doc.add(new StoredField("id", line.substring(0, tab)));
                doc.add(new TextField("text", unescape(line.substring(tab + 1)), Field.Store.NO));
                writer.addDocument(doc);
            }
            writer.forceMerge(1);
        }
        IndexSearcher searcher = new IndexSearcher(DirectoryReader.open(dir));
        searcher.setSimilarity(new BM25Similarity());
        QueryBuilder builder = new QueryBuilder(analyzer);
        int k = Integer.parseInt(args[3]);
        List<String> queries = lines(args[2]);
        for (int q = 0; q < queries.size(); q++) {
            Query query = builder.createBooleanQuery("text", unescape(queries.get(q)));
            if (query == null) continue;  // no tokens: OpenSearch's match query matches nothing
            for (ScoreDoc hit : searcher.search(query, k).scoreDocs) {
                out.println(q + "\t" + searcher.doc(hit.doc).get("id") + "\t" + hit.score);
            }
        }
    }
}
