AUDIT (
  severity error,
  description "every day and page has a positive number of views",
);

SELECT event_date, page, views FROM __ref("daily_kpis") WHERE views <= 0
