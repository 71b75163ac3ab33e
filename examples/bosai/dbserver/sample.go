package dbserver

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// SampleTables are the tables of the sample database, in creation order.
var SampleTables = []string{"customers", "products", "orders", "order_items"}

// Sample sizes.
const (
	sampleCustomers = 40
	sampleProducts  = 20
	sampleOrders    = 300
)

// SampleStatements returns the statements that create and fill the sample
// database, a small shop: customers, products, orders (2024) and
// order_items, for dialect "sqlite" or "postgres". The data is generated
// by a fixed pseudo-random sequence, so it is the same on every call.
func SampleStatements(dialect string) ([]string, error) {
	date, money := "TEXT", "REAL"
	switch dialect {
	case "sqlite":
	case "postgres":
		date, money = "DATE", "NUMERIC(10,2)"
	default:
		return nil, fmt.Errorf("dbserver: dialect %q: want sqlite or postgres", dialect)
	}
	stmts := []string{
		`CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, country TEXT NOT NULL, city TEXT NOT NULL, signup_date ` + date + ` NOT NULL)`,
		`CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, price ` + money + ` NOT NULL)`,
		`CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), order_date ` + date + ` NOT NULL, status TEXT NOT NULL)`,
		`CREATE TABLE order_items (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id), product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL, unit_price ` + money + ` NOT NULL)`,
	}
	r := rng(20240101)
	first := []string{"Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Lars", "Maya", "Noor", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tara"}
	last := []string{"Alvarez", "Brandt", "Chen", "Dubois", "Eriksen", "Fischer", "Gupta", "Hughes", "Ito", "Jensen"}
	places := [][2]string{{"Germany", "Berlin"}, {"Germany", "Munich"}, {"France", "Paris"}, {"France", "Lyon"}, {"USA", "Boston"}, {"USA", "Denver"}, {"UK", "London"}, {"Japan", "Osaka"}, {"Canada", "Toronto"}, {"Spain", "Madrid"}}
	var rows []string
	for i := 1; i <= sampleCustomers; i++ {
		name := first[(i-1)%len(first)] + " " + last[(i*7)%len(last)]
		email := strings.ToLower(strings.ReplaceAll(name, " ", ".")) + fmt.Sprintf("%d@example.com", i)
		p := places[r.next(len(places))]
		signup := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.next(540))
		rows = append(rows, fmt.Sprintf("(%d, '%s', '%s', '%s', '%s', '%s')", i, name, email, p[0], p[1], signup.Format(time.DateOnly)))
	}
	stmts = append(stmts, "INSERT INTO customers (id, name, email, country, city, signup_date) VALUES "+strings.Join(rows, ", "))

	type product struct {
		name, category string
		cents          int
	}
	products := []product{
		{"Laptop Pro 14", "Electronics", 129900}, {"Wireless Mouse", "Electronics", 2499}, {"USB-C Hub", "Electronics", 4999},
		{"Noise-Cancelling Headphones", "Electronics", 19900}, {"4K Monitor", "Electronics", 34900},
		{"Standing Desk", "Furniture", 45000}, {"Ergonomic Chair", "Furniture", 32000}, {"Bookshelf", "Furniture", 8900},
		{"Desk Lamp", "Furniture", 3900}, {"Espresso Machine", "Kitchen", 24900}, {"Chef Knife", "Kitchen", 7900},
		{"Cast Iron Pan", "Kitchen", 4500}, {"Kettle", "Kitchen", 3500}, {"Running Shoes", "Sports", 11900},
		{"Yoga Mat", "Sports", 2900}, {"Water Bottle", "Sports", 1500}, {"Notebook Set", "Office", 1200},
		{"Fountain Pen", "Office", 5600}, {"Printer Paper", "Office", 899}, {"Whiteboard", "Office", 6900},
	}
	rows = rows[:0]
	for i, p := range products {
		rows = append(rows, fmt.Sprintf("(%d, '%s', '%s', %s)", i+1, p.name, p.category, cents(p.cents)))
	}
	stmts = append(stmts, "INSERT INTO products (id, name, category, price) VALUES "+strings.Join(rows, ", "))

	statuses := []string{"delivered", "delivered", "delivered", "shipped", "pending", "cancelled"}
	rows = rows[:0]
	var items []string
	item := 1
	for i := 1; i <= sampleOrders; i++ {
		d := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.next(366))
		rows = append(rows, fmt.Sprintf("(%d, %d, '%s', '%s')", i, 1+r.next(sampleCustomers), d.Format(time.DateOnly), statuses[r.next(len(statuses))]))
		n := 1 + r.next(4)
		for k := 0; k < n; k++ {
			p := r.next(len(products))
			items = append(items, fmt.Sprintf("(%d, %d, %d, %d, %s)", item, i, p+1, 1+r.next(3), cents(products[p].cents)))
			item++
		}
	}
	stmts = append(stmts, "INSERT INTO orders (id, customer_id, order_date, status) VALUES "+strings.Join(rows, ", "))
	stmts = append(stmts, "INSERT INTO order_items (id, order_id, product_id, quantity, unit_price) VALUES "+strings.Join(items, ", "))
	return stmts, nil
}

func cents(c int) string { return fmt.Sprintf("%d.%02d", c/100, c%100) }

// rng is a small linear congruential generator: the sample must not change
// with the standard library's generators.
type rng uint64

func (r *rng) next(n int) int {
	*r = *r*6364136223846793005 + 1442695040888963407
	return int(uint64(*r>>33) % uint64(n))
}

// CreateSample creates the sample tables in db (a writable connection) for
// dialect "sqlite" or "postgres", in one transaction.
func CreateSample(ctx context.Context, db *sql.DB, dialect string) error {
	stmts, err := SampleStatements(dialect)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("dbserver: sample: %w", err)
		}
	}
	return tx.Commit()
}
