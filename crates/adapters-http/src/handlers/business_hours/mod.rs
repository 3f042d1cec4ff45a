//! `/v1/business-hours`: the hours in which the conversation reports (with `business_hours=true`)
//! and SLA targets count time. The record is [`domain::business_hours::BusinessHoursRecord`].

pub mod get;
pub mod put;
