-- Kestrel Bridgeworks: an invented structural engineering consultancy, the GRAMMAR quickstart
-- database. Every name and figure here is made up. Values deliberately include quotes, a
-- semicolon, NULLs and non-ASCII text.

CREATE TABLE office (
    office_id   INTEGER PRIMARY KEY,
    city        TEXT NOT NULL,
    country     TEXT NOT NULL,
    opened_year INTEGER
);

CREATE TABLE employee (
    employee_id INTEGER PRIMARY KEY,
    full_name   TEXT NOT NULL,
    job_title   TEXT NOT NULL,
    office_id   INTEGER REFERENCES office (office_id),
    start_year  INTEGER,
    email       TEXT
);

CREATE TABLE client (
    client_id INTEGER PRIMARY KEY,
    name      TEXT NOT NULL,
    sector    TEXT,
    country   TEXT
);

CREATE TABLE project (
    project_id  INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    client_id   INTEGER REFERENCES client (client_id),
    lead_id     INTEGER REFERENCES employee (employee_id),
    budget_musd REAL,
    status      TEXT
);

INSERT INTO office VALUES (1, 'Melbourne', 'Australia', 1998);
INSERT INTO office VALUES (2, 'Zürich', 'Switzerland', 2005);
INSERT INTO office VALUES (3, 'São Paulo', 'Brazil', 2012);
INSERT INTO office VALUES (4, 'Auckland', 'New Zealand', 2016);

INSERT INTO employee VALUES (1, 'Aroha Ngata', 'Principal Engineer', 4, 2016, 'aroha.ngata@kestrel.example');
INSERT INTO employee VALUES (2, 'Zoë Ängström', 'Bridge Designer', 2, 2007, 'zoe.angstrom@kestrel.example');
INSERT INTO employee VALUES (3, 'Liam O''Connor', 'Project Director', 1, 2001, NULL);
INSERT INTO employee VALUES (4, 'Mei-Lin Chau', 'Geotechnical Engineer', 1, 2014, 'meilin.chau@kestrel.example');
INSERT INTO employee VALUES (5, 'João Pereira', 'Structural Analyst', 3, 2013, NULL);
INSERT INTO employee VALUES (6, 'Priya Raman', 'Sustainability Lead', 2, 2019, 'priya.raman@kestrel.example');
INSERT INTO employee VALUES (7, 'Tomasz Wójcik', 'Site Engineer', 3, 2020, 'tomasz.wojcik@kestrel.example');
INSERT INTO employee VALUES (8, 'Hana Satō', 'Project Manager', 4, 2018, 'hana.sato@kestrel.example');

INSERT INTO client VALUES (1, 'Harbourline Rail', 'Transport', 'Australia');
INSERT INTO client VALUES (2, 'O''Brien & Sons Ltd', 'Construction', 'New Zealand');
INSERT INTO client VALUES (3, 'Städtische Werke Basel', 'Utilities', 'Switzerland');
INSERT INTO client VALUES (4, 'Companhia Verde; Energia', 'Energy', 'Brazil');
INSERT INTO client VALUES (5, 'Pacific Health Trust', 'Healthcare', NULL);

INSERT INTO project VALUES (1, 'Westgate Viaduct Retrofit', 1, 3, 84.5, 'Completed');
INSERT INTO project VALUES (2, 'Rhine Footbridge', 3, 2, 12.0, 'Active');
INSERT INTO project VALUES (3, 'Tāmaki Hospital Wing', 5, 8, 46.2, 'Active');
INSERT INTO project VALUES (4, 'Solar Farm Foundations', 4, 5, 23.75, 'Planning');
INSERT INTO project VALUES (5, 'Quay Street Seawall', 2, 1, 31.0, 'Completed');
INSERT INTO project VALUES (6, 'Ponte "Azul" Inspection', 4, 7, 3.4, 'Active');
INSERT INTO project VALUES (7, 'Northern Line Depot', 1, 4, 57.9, NULL);
