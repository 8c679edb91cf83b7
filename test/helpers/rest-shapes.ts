/** The REST shapes of a lead and of a score signal (CONTRACT §5), as tests read them. */
export interface Lead {
  id: string;
  object: string;
  livemode: boolean;
  created_at: string;
  updated_at: string;
  company: string;
  contact_email: string;
  contact_name: string | null;
  industry: string | null;
  employees: number | null;
  website: string | null;
  country: string | null;
  source: string | null;
  status: string;
  score: number;
  score_label: string;
  model_version: string;
  scored_at: string;
  metadata: Record<string, string>;
}

export interface Signal {
  name: string;
  value: string;
  impact: number;
  description: string;
}
