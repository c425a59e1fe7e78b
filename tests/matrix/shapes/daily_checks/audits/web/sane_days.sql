AUDIT (
  severity error,
  description "every day has visits, and no more visitors than visits",
);

SELECT visit_date, visits, visitors FROM __ref("daily_visits") WHERE visits <= 0 OR visitors > visits
