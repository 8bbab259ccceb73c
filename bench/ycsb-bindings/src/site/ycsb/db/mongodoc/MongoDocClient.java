/*
 * Copyright 2026 the dbdelta authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this
 * file except in compliance with the License. You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under
 * the License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
 * KIND, either express or implied. See the License for the specific language governing
 * permissions and limitations under the License.
 */
package site.ycsb.db.mongodoc;

import com.mongodb.ConnectionString;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.FindIterable;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.UpdateResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.Document;
import org.bson.types.Binary;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * A YCSB {@link DB} on the MongoDB Java driver 5.x (mongodb-driver-sync), written for
 * dbdelta's bench/vs-ycsb.sh. It is NOT YCSB's own mongodb binding: YCSB 0.17.0's
 * MongoDbClient is built on the 3.x driver API (com.mongodb.MongoClient, MongoClientURI),
 * which the 5.x driver no longer has, and its jar is not on Maven Central. This class
 * re-implements that binding's record layout and requests one for one:
 *
 * <ul>
 *   <li>one document per record in collection {@code table} of the URL's database
 *       ({@code ycsb} when the URL names none or {@code admin}), {@code _id} the key as a
 *       string, each field a binary value;
 *   <li>read: {@code find({_id: key}).projection({f: 1, ...}).first()};
 *   <li>scan: {@code find({_id: {$gte: key}}).sort({_id: 1}).limit(n)} with the projection,
 *       ERROR when it finds nothing;
 *   <li>update: {@code updateOne({_id: key}, {$set: {...}})}, NOT_FOUND when nothing matched;
 *   <li>insert: {@code insertOne}, or with {@code batchsize} &gt; 1 {@code insertMany}
 *       unordered of that many documents (BATCHED_OK until a batch is full);
 *   <li>delete: {@code deleteOne({_id: key})}, NOT_FOUND when nothing was deleted;
 *   <li>write concern and read preference from the URL ({@code mongodb.url}), one client
 *       (and its connection pool) shared by all threads.
 * </ul>
 *
 * The binding's {@code mongodb.upsert} option is not supported (vs-ycsb.sh does not use it).
 */
public class MongoDocClient extends DB {
  private static final Integer INCLUDE = Integer.valueOf(1);
  private static final InsertManyOptions INSERT_UNORDERED = new InsertManyOptions().ordered(false);
  private static final Object LOCK = new Object();
  private static final AtomicInteger INIT_COUNT = new AtomicInteger(0);
  private static MongoClient client;
  private static MongoDatabase database;
  private static int batchSize;

  private final List<Document> bulkInserts = new ArrayList<Document>();

  @Override
  public void init() throws DBException {
    INIT_COUNT.incrementAndGet();
    synchronized (LOCK) {
      if (client != null) {
        return;
      }
      Properties props = getProperties();
      batchSize = Integer.parseInt(props.getProperty("batchsize", "1"));
      if (Boolean.parseBoolean(props.getProperty("mongodb.upsert", "false"))) {
        throw new DBException("mongodb.upsert is not supported by MongoDocClient");
      }
      String url = props.getProperty("mongodb.url", "mongodb://localhost:27017/ycsb?w=1");
      try {
        ConnectionString uri = new ConnectionString(url);
        String db = uri.getDatabase();
        String name = (db != null && !db.isEmpty() && !"admin".equals(db)) ? db : "ycsb";
        // The 3.x driver's MongoClientURI options default to ACKNOWLEDGED and primary.
        WriteConcern wc = uri.getWriteConcern() != null ? uri.getWriteConcern() : WriteConcern.ACKNOWLEDGED;
        ReadPreference rp = uri.getReadPreference() != null ? uri.getReadPreference() : ReadPreference.primary();
        client = MongoClients.create(uri);
        database = client.getDatabase(name).withReadPreference(rp).withWriteConcern(wc);
      } catch (Exception e) {
        throw new DBException("could not connect to " + url + ": " + e, e);
      }
    }
  }

  @Override
  public void cleanup() throws DBException {
    if (!bulkInserts.isEmpty()) {
      // YCSB's binding leaves a partial last batch unsent; so does this one (same counts).
      bulkInserts.clear();
    }
    if (INIT_COUNT.decrementAndGet() == 0) {
      synchronized (LOCK) {
        if (client != null) {
          client.close();
        }
        client = null;
        database = null;
      }
    }
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      MongoCollection<Document> collection = database.getCollection(table);
      FindIterable<Document> find = collection.find(new Document("_id", key));
      if (fields != null) {
        find.projection(projection(fields));
      }
      Document doc = find.first();
      if (doc == null) {
        return Status.NOT_FOUND;
      }
      fillMap(result, doc);
      return Status.OK;
    } catch (Exception e) {
      System.err.println(e.toString());
      return Status.ERROR;
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    MongoCursor<Document> cursor = null;
    try {
      MongoCollection<Document> collection = database.getCollection(table);
      FindIterable<Document> find = collection.find(new Document("_id", new Document("$gte", startkey)))
          .sort(new Document("_id", INCLUDE)).limit(recordcount);
      if (fields != null) {
        find.projection(projection(fields));
      }
      cursor = find.iterator();
      if (!cursor.hasNext()) {
        System.err.println("Nothing found in scan for key " + startkey);
        return Status.ERROR;
      }
      result.ensureCapacity(recordcount);
      while (cursor.hasNext()) {
        HashMap<String, ByteIterator> row = new HashMap<String, ByteIterator>();
        fillMap(row, cursor.next());
        result.add(row);
      }
      return Status.OK;
    } catch (Exception e) {
      System.err.println(e.toString());
      return Status.ERROR;
    } finally {
      if (cursor != null) {
        cursor.close();
      }
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      MongoCollection<Document> collection = database.getCollection(table);
      Document set = new Document();
      for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
        set.put(e.getKey(), e.getValue().toArray());
      }
      UpdateResult r = collection.updateOne(new Document("_id", key), new Document("$set", set));
      if (r.wasAcknowledged() && r.getMatchedCount() == 0) {
        System.err.println("Nothing updated for key " + key);
        return Status.NOT_FOUND;
      }
      return Status.OK;
    } catch (Exception e) {
      System.err.println(e.toString());
      return Status.ERROR;
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    try {
      MongoCollection<Document> collection = database.getCollection(table);
      Document doc = new Document("_id", key);
      for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
        doc.put(e.getKey(), e.getValue().toArray());
      }
      if (batchSize == 1) {
        collection.insertOne(doc);
        return Status.OK;
      }
      bulkInserts.add(doc);
      if (bulkInserts.size() < batchSize) {
        return Status.BATCHED_OK;
      }
      collection.insertMany(bulkInserts, INSERT_UNORDERED);
      bulkInserts.clear();
      return Status.OK;
    } catch (Exception e) {
      System.err.println("Exception while trying bulk insert with " + bulkInserts.size());
      e.printStackTrace();
      return Status.ERROR;
    }
  }

  @Override
  public Status delete(String table, String key) {
    try {
      MongoCollection<Document> collection = database.getCollection(table);
      DeleteResult r = collection.deleteOne(new Document("_id", key));
      if (r.wasAcknowledged() && r.getDeletedCount() == 0) {
        System.err.println("Nothing deleted for key " + key);
        return Status.NOT_FOUND;
      }
      return Status.OK;
    } catch (Exception e) {
      System.err.println(e.toString());
      return Status.ERROR;
    }
  }

  private static Document projection(Set<String> fields) {
    Document p = new Document();
    for (String f : fields) {
      p.put(f, INCLUDE);
    }
    return p;
  }

  private static void fillMap(Map<String, ByteIterator> out, Document doc) {
    for (Map.Entry<String, Object> e : doc.entrySet()) {
      if (e.getValue() instanceof Binary) {
        out.put(e.getKey(), new ByteArrayByteIterator(((Binary) e.getValue()).getData()));
      }
    }
  }
}
