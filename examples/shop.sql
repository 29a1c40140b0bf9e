-- The sample SQLite database of the README's example (examples/shop.db is built
-- from this file: sqlite3 examples/shop.db < examples/shop.sql, or
-- node scripts/make-sample-db.js).
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, since DATE);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price NUMERIC NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers, product_id INTEGER REFERENCES products, quantity INTEGER NOT NULL, placed_at DATE NOT NULL);
INSERT INTO customers (name, city, since) VALUES
  ('Ada', 'London', '2021-03-01'), ('Grace', 'Arlington', '2020-11-15'), ('Linus', 'Helsinki', '2022-06-30'),
  ('Margaret', 'Boston', '2019-01-20'), ('Alan', 'Manchester', '2023-09-09');
INSERT INTO products (name, price) VALUES ('notebook', 4.50), ('pen', 1.20), ('lamp', 32.00), ('chair', 89.90);
INSERT INTO orders (customer_id, product_id, quantity, placed_at) VALUES
  (1, 1, 3, '2024-06-01'), (1, 3, 1, '2024-06-03'), (2, 4, 2, '2024-06-04'), (3, 2, 10, '2024-06-05'),
  (4, 1, 1, '2024-06-07'), (5, 3, 2, '2024-06-09'), (2, 2, 5, '2024-06-10'), (4, 4, 1, '2024-06-12');
